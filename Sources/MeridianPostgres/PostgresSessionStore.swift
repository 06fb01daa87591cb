import MeridianCore
import MeridianProtocol
import MeridianStorage
import PostgresNIO

/// The store of a cluster: sessions in one PostgreSQL database shared by every node.
/// Tables `sessions` and `annotations` (``PostgresSchema``), bodies in the JSON shapes the
/// SQLite store keeps; the same contract, plus fencing numbers: a change written under a
/// fence below the session's stored one is refused (``StorageError/fenced(session:stored:offered:)``),
/// so a node that lost a session's lease cannot overwrite its new owner's writes.
///
/// The API is synchronous and runs on the storage threads (``StorageWriter``'s,
/// ``StorageReader``'s), which block while PostgreSQL answers; each has a connection of its
/// own while it calls (``PostgresConnections``). When PostgreSQL is unreachable or restarts,
/// calls fail within `connectTimeout` (or `operationTimeout` for a server that stopped
/// answering) with `readFailed`/`writeFailed` naming the cause, and succeed again once it is
/// back. One ``commit(_:)`` is one transaction, however many changes it holds.
public final class PostgresSessionStore: SessionStore {
    /// The database's URL without its password.
    public let url: String
    private let connections: PostgresConnections

    /// Connects to the database at `url` (`postgres://user:password@host:port/database`) and
    /// creates the tables that are missing.
    /// - Throws: ``StorageError/cannotOpen(_:_:)`` naming the URL without its password and
    ///   the cause (a URL that is not PostgreSQL's, no answer, a refused login).
    ///
    /// PostgreSQL bounds each of the store's connections too: a statement waits at most
    /// `lockTimeout` for a lock (then ``StorageError/locked(session:_:)``), a transaction left
    /// idle longer than `idleTransactionTimeout` is ended with its locks (a node paused in the
    /// middle of a commit holds up no other node for longer; keep it at most a cluster's lease
    /// time, so that a new owner finds the rows free), and a statement runs at most `operationTimeout`.
    public init(
        url: String, connectTimeout: Duration = .seconds(3), operationTimeout: Duration = .seconds(15),
        lockTimeout: Duration = .seconds(1), idleTransactionTimeout: Duration = .seconds(2)
    ) throws(StorageError) {
        let address: PostgresAddress
        let tls: PostgresConnection.Configuration.TLS
        do {
            address = try PostgresAddress(url)
            tls = try address.tlsConfiguration()
        } catch {
            throw .cannotOpen(PostgresAddress.redact(url), error.reason)
        }
        self.url = address.redacted
        connections = PostgresConnections(
            address: address, connectTimeout: connectTimeout, operationTimeout: operationTimeout,
            limits: .init(lock: lockTimeout, idleTransaction: idleTransactionTimeout, statement: operationTimeout), tls: tls)
        do {
            try connections.withConnection { try PostgresSchema.create(on: $0) }
        } catch {
            throw .cannotOpen(address.redacted, PostgresFailure.reason(error))
        }
    }

    /// True if `url` names a PostgreSQL database (`postgres://` or `postgresql://`), whether or
    /// not the rest of it is valid.
    public static func isPostgresURL(_ url: String) -> Bool {
        guard let end = url.range(of: "://") else { return false }
        return PostgresAddress.schemes.contains(url[..<end.lowerBound].lowercased())
    }

    /// `url` without the password it may hold, for messages.
    public static func redacted(_ url: String) -> String { PostgresAddress.redact(url) }

    /// The session with its stored fence, header, annotations and undo histories read in one
    /// statement; nil if none is stored or it was deleted.
    /// Whether `id` has a row that is not deleted (its annotations are not read).
    public func contains(_ id: String) throws(StorageError) -> Bool {
        do {
            return try connections.withConnection { c in
                try c.run("SELECT 1 FROM sessions WHERE id = \(id) AND NOT deleted").first != nil
            }
        } catch {
            throw failure(error, StorageError.readFailed)
        }
    }

    public func load(_ id: String) throws(StorageError) -> StoredSession? {
        let found: Row?
        do {
            found = try connections.withConnection { c in try Self.read(id, on: c) }
        } catch {
            throw failure(error, StorageError.readFailed)
        }
        return try decode(id, found)
    }

    /// For a new owner: the session is read and its fencing number becomes the stored one (when
    /// above it), in one transaction; the session comes back with the fence stored before. The
    /// row lock, taken first, orders it with a former owner's commit in flight: committed before,
    /// it is read here; after, it is refused for its fence. (A session not stored yet has no row
    /// to hold the fence: its new owner's first write does. A deleted one's row takes the fence
    /// too, and reads as none.)
    public func load(_ id: String, claiming fence: UInt64) throws(StorageError) -> StoredSession? {
        let found: Row?
        do {
            found = try connections.withConnection { c in
                try c.transaction {
                    _ = try c.run("SELECT 1 FROM sessions WHERE id = \(id) FOR UPDATE")
                    let read = try Self.read(id, on: c)
                    try c.run("UPDATE sessions SET fence = \(Int64(clamping: fence)) WHERE id = \(id) AND fence < \(Int64(clamping: fence))")
                    return read
                }
            }
        } catch let error as StorageError {
            throw error
        } catch {
            throw failure(error, StorageError.readFailed)
        }
        return try decode(id, found)
    }

    private typealias Row = (
        settings: String, callout: String?, seq: Int64, epoch: String, bodies: [String], fence: Int64,
        historyParticipants: [String], histories: [String]
    )

    /// One statement: the header, the annotations and the undo histories from one snapshot.
    private static func read(_ id: String, on c: BlockingConnection) throws -> Row? {
        let rows = try c.run("""
            SELECT s.settings, s.callout, s.seq, s.epoch,
                coalesce((SELECT array_agg(a.body ORDER BY a.id) FROM annotations a WHERE a.session_id = s.id), '{}'),
                s.fence,
                coalesce((SELECT array_agg(h.participant ORDER BY h.participant) FROM undo_histories h WHERE h.session_id = s.id), '{}'),
                coalesce((SELECT array_agg(h.body ORDER BY h.participant) FROM undo_histories h WHERE h.session_id = s.id), '{}')
            FROM sessions s WHERE s.id = \(id) AND NOT s.deleted
            """)
        return try rows.first.map { try $0.decode((String, String?, Int64, String, [String], Int64, [String], [String]).self) }
    }

    private func decode(_ id: String, _ found: Row?) throws(StorageError) -> StoredSession? {
        guard let found else { return nil }
        do throws(ProtocolError) {
            let settings = try StoredForm.settings(Array(found.settings.utf8))
            let callout = try found.callout.map { s throws(ProtocolError) in try StoredForm.callout(Array(s.utf8)) }
            var annotations: [Annotation] = []
            annotations.reserveCapacity(found.bodies.count)
            let seq = UInt64(max(0, found.seq))
            for body in found.bodies { annotations.append(try StoredForm.annotation(Array(body.utf8), revisionIfAbsent: seq)) }
            annotations.sort { ($0.zIndex, $0.id) < ($1.zIndex, $1.id) }
            var histories: [ParticipantID: UndoHistory] = [:]
            for (pid, body) in zip(found.historyParticipants, found.histories) {
                histories[pid] = try StoredForm.history(Array(body.utf8))
            }
            return StoredSession(
                record: SessionRecord(id: id, settings: settings, annotations: annotations, callout: callout, seq: seq, histories: histories),
                epoch: found.epoch, fence: UInt64(max(0, found.fence)))
        } catch {
            throw .corrupt("session \(id): \(error.message)")
        }
    }

    /// Runs `SELECT 1`: throws `readFailed` naming the cause while PostgreSQL does not answer.
    public func probe() throws(StorageError) {
        do {
            _ = try connections.withConnection { c in try c.run("SELECT 1") }
        } catch {
            throw failure(error, StorageError.readFailed)
        }
    }

    /// Every stored session not deleted (id, seq, annotation count), sorted by id in byte order.
    public func list() throws(StorageError) -> [StoredSessionSummary] {
        do {
            return try connections.withConnection { c in
                // Byte order ("C"), as the other stores sort ids, whatever the database's collation.
                try c.run("""
                    SELECT s.id, s.seq, (SELECT count(*) FROM annotations a WHERE a.session_id = s.id),
                        (extract(epoch FROM s.updated_at) * 1000)::bigint
                    FROM sessions s WHERE NOT s.deleted ORDER BY s.id COLLATE "C"
                    """).map { row in
                    let (id, seq, count, written) = try row.decode((String, Int64, Int64, Int64).self)
                    return StoredSessionSummary(id: id, seq: UInt64(max(0, seq)), annotationCount: Int(count), writtenMs: written)
                }
            }
        } catch {
            throw failure(error, StorageError.readFailed)
        }
    }

    /// `error` as a storage error: a ``StorageError`` the store threw as it is, any other
    /// made by `kind` with a reason naming the database.
    func failure(_ error: any Error, _ kind: (String) -> StorageError) -> StorageError {
        if let error = error as? StorageError { return error }
        return kind("PostgreSQL at \(url): \(PostgresFailure.reason(error))")
    }

    /// Runs `body` with a connection of this store's, for its commits.
    func withConnection<T>(_ body: (BlockingConnection) throws -> T) throws -> T {
        try connections.withConnection(body)
    }
}
