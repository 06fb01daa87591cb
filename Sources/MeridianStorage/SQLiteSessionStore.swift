import Foundation
import GRDB
import MeridianCore
import MeridianProtocol

/// The embedded default store: one SQLite file (`meridian.sqlite`) in the data
/// directory, in WAL mode with `synchronous = FULL`, so a committed
/// transaction survives a crash of the process or the machine.
///
/// Tables: `sessions` (id, settings, callout, seq, epoch), `annotations` (session, id, body)
/// and `undo_histories` (session, participant, body); bodies are JSON in the shapes of
/// Protocol v1 (`StoredForm`).
///
/// Fencing numbers (``SessionUpdate/fence``) are ignored: the file belongs to one node, which
/// is the only owner of its sessions. A cluster shares a store that enforces them.
public final class SQLiteSessionStore: SessionStore {
    /// The name of the SQLite file in the data directory, which the event logs share.
    public static let fileName = "meridian.sqlite"
    /// The full path of the store's SQLite file.
    public let path: String
    private let pool: DatabasePool

    /// Opens (creating if needed) the store in `directory`.
    public init(directory: String) throws(StorageError) {
        (pool, path) = try SQLiteFile.open(in: directory, synchronous: "FULL") { try Self.migrator.migrate($0) }
    }

    private static var migrator: DatabaseMigrator {
        var m = DatabaseMigrator()
        m.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE sessions (
                    id TEXT PRIMARY KEY NOT NULL,
                    settings TEXT NOT NULL,
                    callout TEXT,
                    seq INTEGER NOT NULL,
                    epoch TEXT NOT NULL,
                    updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
                );
                CREATE TABLE annotations (
                    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                    id TEXT NOT NULL,
                    body TEXT NOT NULL,
                    PRIMARY KEY (session_id, id)
                ) WITHOUT ROWID;
                """)
        }
        m.registerMigration("v2: undo histories") { db in
            try db.execute(sql: """
                CREATE TABLE undo_histories (
                    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
                    participant TEXT NOT NULL,
                    body TEXT NOT NULL,
                    PRIMARY KEY (session_id, participant)
                ) WITHOUT ROWID;
                """)
        }
        return m
    }

    /// The session's row, annotations and undo histories, read in one transaction; nil if none is
    /// stored. Throws `corrupt` for a stored body that does not decode.
    /// Whether `id` has a row in `sessions` (its annotations are not read).
    public func contains(_ id: String) throws(StorageError) -> Bool {
        do {
            return try pool.read { db in try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM sessions WHERE id = ?)", arguments: [id]) ?? false }
        } catch {
            throw .readFailed(SQLiteFile.reason(error))
        }
    }

    public func load(_ id: String) throws(StorageError) -> StoredSession? {
        let rows: (Row, [String], [Row])?
        do {
            rows = try pool.read { db -> (Row, [String], [Row])? in
                guard let header = try Row.fetchOne(db, sql: "SELECT * FROM sessions WHERE id = ?", arguments: [id]) else { return nil }
                let bodies = try String.fetchAll(db, sql: "SELECT body FROM annotations WHERE session_id = ? ORDER BY id", arguments: [id])
                let histories = try Row.fetchAll(db, sql: "SELECT participant, body FROM undo_histories WHERE session_id = ?", arguments: [id])
                return (header, bodies, histories)
            }
        } catch {
            throw .readFailed(SQLiteFile.reason(error))
        }
        guard let (header, bodies, historyRows) = rows else { return nil }
        do throws(ProtocolError) {
            let settings = try StoredForm.settings(Array((header["settings"] as String).utf8))
            let callout = try (header["callout"] as String?).map { s throws(ProtocolError) in try StoredForm.callout(Array(s.utf8)) }
            let seq = UInt64(max(0, header["seq"] as Int64))
            var annotations: [Annotation] = []
            annotations.reserveCapacity(bodies.count)
            for body in bodies { annotations.append(try StoredForm.annotation(Array(body.utf8), revisionIfAbsent: seq)) }
            annotations.sort { ($0.zIndex, $0.id) < ($1.zIndex, $1.id) }
            var histories: [ParticipantID: UndoHistory] = [:]
            for row in historyRows { histories[row["participant"]] = try StoredForm.history(Array((row["body"] as String).utf8)) }
            return StoredSession(
                record: SessionRecord(id: id, settings: settings, annotations: annotations, callout: callout, seq: seq, histories: histories),
                epoch: header["epoch"])
        } catch {
            throw .corrupt("session \(id): \(error.message)")
        }
    }

    /// Every stored session's id, seq and annotation count, sorted by id.
    public func list() throws(StorageError) -> [StoredSessionSummary] {
        do {
            return try pool.read { db in
                try Row.fetchAll(db, sql: """
                    SELECT s.id, s.seq, (SELECT count(*) FROM annotations a WHERE a.session_id = s.id) AS n,
                        CAST(round((julianday(s.updated_at) - 2440587.5) * 86400000) AS INTEGER) AS written
                    FROM sessions s ORDER BY s.id
                    """).map { row in
                    StoredSessionSummary(id: row["id"], seq: UInt64(max(0, row["seq"] as Int64)), annotationCount: row["n"], writtenMs: row["written"])
                }
            }
        } catch {
            throw .readFailed(SQLiteFile.reason(error))
        }
    }

    /// Applies the changes in order in one transaction, all or none; fences are not checked.
    public func commit(_ changes: [SessionChange]) throws(StorageError) {
        guard !changes.isEmpty else { return }
        do {
            try pool.write { db in
                for change in changes {
                    switch change {
                    case .delete(let id, _):
                        try db.execute(sql: "DELETE FROM annotations WHERE session_id = ?", arguments: [id])
                        try db.execute(sql: "DELETE FROM undo_histories WHERE session_id = ?", arguments: [id])
                        try db.execute(sql: "DELETE FROM sessions WHERE id = ?", arguments: [id])
                    case .update(let u):
                        try Self.write(u, db)
                    }
                }
            }
        } catch {
            throw .writeFailed(SQLiteFile.reason(error))
        }
    }

    private static func write(_ u: SessionUpdate, _ db: Database) throws {
        let settings = String(decoding: StoredForm.encode(u.settings), as: UTF8.self)
        let callout = u.callout.map { String(decoding: StoredForm.encode($0), as: UTF8.self) }
        try db.execute(sql: """
            INSERT INTO sessions (id, settings, callout, seq, epoch) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET settings = excluded.settings, callout = excluded.callout,
                seq = excluded.seq, epoch = excluded.epoch,
                updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
            """, arguments: [u.id, settings, callout, Int64(clamping: u.seq), u.epoch])
        if u.replacesAnnotations {
            try db.execute(sql: "DELETE FROM annotations WHERE session_id = ?", arguments: [u.id])
        }
        for id in u.removed {
            try db.execute(sql: "DELETE FROM annotations WHERE session_id = ? AND id = ?", arguments: [u.id, id])
        }
        let upsert = try db.cachedStatement(sql: """
            INSERT INTO annotations (session_id, id, body) VALUES (?, ?, ?)
            ON CONFLICT(session_id, id) DO UPDATE SET body = excluded.body
            """)
        for a in u.upserted {
            try upsert.execute(arguments: [u.id, a.id, String(decoding: StoredForm.encode(a), as: UTF8.self)])
        }
        if u.replacesAnnotations {
            try db.execute(sql: "DELETE FROM undo_histories WHERE session_id = ?", arguments: [u.id])
        }
        for (pid, history) in u.histories {
            if let history {
                try db.execute(sql: """
                    INSERT INTO undo_histories (session_id, participant, body) VALUES (?, ?, ?)
                    ON CONFLICT(session_id, participant) DO UPDATE SET body = excluded.body
                    """, arguments: [u.id, pid, String(decoding: StoredForm.encode(history), as: UTF8.self)])
            } else {
                try db.execute(sql: "DELETE FROM undo_histories WHERE session_id = ? AND participant = ?", arguments: [u.id, pid])
            }
        }
    }
}
