import MeridianStorage
import PostgresNIO

/// The event logs of a cluster's sessions in the store's PostgreSQL database (table
/// `event_log`), so that every node reads one history: a session's log survives a failover,
/// and the HTTP API and the dashboard's replay show the same entries at every node. Positions
/// come from one sequence: increasing in the order entries are appended, never reused.
public final class PostgresEventLogStore: EventLogStore {
    private let store: PostgresSessionStore

    /// The log beside `store`'s sessions, on its connections (the table exists once the store opened).
    public init(beside store: PostgresSessionStore) {
        self.store = store
    }

    /// Appends the entries in one statement; their positions come from the table's sequence, in
    /// the entries' order.
    public func append(_ entries: [EventLogEntry]) throws(StorageError) -> [EventLogEntry] {
        guard !entries.isEmpty else { return [] }
        do {
            let positions = try store.withConnection { c in
                // One statement; rows take their positions in the entries' order (ORDER BY n).
                let rows = try c.run("""
                    INSERT INTO event_log (session_id, epoch, seq, time_ms, kind, body)
                    SELECT s, e, q, t, k, b FROM unnest(
                        \(entries.map(\.session))::text[], \(entries.map(\.epoch))::text[],
                        \(entries.map { Int64(clamping: $0.seq) })::bigint[], \(entries.map(\.timeMs))::bigint[],
                        \(entries.map { Int16($0.kind.rawValue) })::smallint[],
                        \(entries.map { String(decoding: $0.body, as: UTF8.self) })::text[]
                    ) WITH ORDINALITY AS x(s, e, q, t, k, b, n) ORDER BY n
                    RETURNING position
                    """)
                return try rows.map { try $0.decode(Int64.self) }.sorted()
            }
            guard positions.count == entries.count else {
                throw StorageError.writeFailed("event log: \(positions.count) positions for \(entries.count) entries")
            }
            return zip(entries, positions).map { entry, position in
                var e = entry
                e.position = position
                return e
            }
        } catch {
            throw store.failure(error, StorageError.writeFailed)
        }
    }

    /// Up to `limit` entries of `session` in `range`, in its order.
    public func entries(of session: String, in range: EventLogRange, limit: Int) throws(StorageError) -> [EventLogEntry] {
        do {
            return try store.withConnection { c in
                try c.run("""
                    SELECT position, epoch, seq, time_ms, kind, body FROM event_log
                    WHERE session_id = \(session) AND position > \(range.after) AND position < \(range.before)
                      AND time_ms >= \(range.since) AND time_ms < \(range.until)
                    ORDER BY position \(unescaped: range.newestFirst ? "DESC" : "ASC") LIMIT \(max(0, limit))
                    """).map { row in
                    let (position, epoch, seq, time, kind, body) = try row.decode((Int64, String, Int64, Int64, Int16, String).self)
                    return EventLogEntry(position: position, session: session, epoch: epoch, seq: UInt64(max(0, seq)), timeMs: time,
                                         kind: EventLogEntry.Kind(rawValue: Int(kind)) ?? .event, body: Array(body.utf8))
                }
            }
        } catch {
            throw store.failure(error, StorageError.readFailed)
        }
    }

    /// Deletes the rows older than `retention`'s cutoff at `nowMs`, then the rows of each of
    /// `sessions` beyond its newest `retention.maxEntries`; returns how many went.
    public func prune(_ retention: EventLogRetention, nowMs: Int64, sessions: Set<String>) throws(StorageError) -> Int {
        do {
            return try store.withConnection { c in
                var removed = try c.run("DELETE FROM event_log WHERE time_ms < \(retention.cutoff(nowMs: nowMs))").metadata.rows ?? 0
                for id in sessions.sorted() {
                    removed += try c.run("""
                        DELETE FROM event_log WHERE session_id = \(id) AND position <=
                            (SELECT position FROM event_log WHERE session_id = \(id) ORDER BY position DESC LIMIT 1 OFFSET \(retention.maxEntries))
                        """).metadata.rows ?? 0
                }
                return removed
            }
        } catch {
            throw store.failure(error, StorageError.writeFailed)
        }
    }

    /// Deletes `session`'s whole log.
    public func remove(session: String) throws(StorageError) {
        do {
            try store.withConnection { c in _ = try c.run("DELETE FROM event_log WHERE session_id = \(session)") }
        } catch {
            throw store.failure(error, StorageError.writeFailed)
        }
    }

}
