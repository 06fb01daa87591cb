import Foundation
import GRDB

/// Event logs in the session store's SQLite file (`meridian.sqlite`), table
/// `event_log`, through a connection pool of their own so that log writes never
/// wait behind the session writer's transactions in the same process.
///
/// Log rows are written with `synchronous = NORMAL`: a committed row survives a
/// crash of the process; a crash of the machine may lose the last rows written
/// since the log was last synced (sessions themselves keep `FULL`).
public final class SQLiteEventLogStore: EventLogStore {
    private let pool: DatabasePool

    /// Opens (creating if needed) the log beside the sessions in `directory`.
    public init(directory: String) throws(StorageError) {
        pool = try SQLiteFile.open(in: directory, synchronous: "NORMAL") { pool in
            try pool.write { db in
                try db.execute(sql: """
                    CREATE TABLE IF NOT EXISTS event_log (
                        position INTEGER PRIMARY KEY AUTOINCREMENT,
                        session_id TEXT NOT NULL,
                        epoch TEXT NOT NULL,
                        seq INTEGER NOT NULL,
                        time_ms INTEGER NOT NULL,
                        kind INTEGER NOT NULL,
                        body TEXT NOT NULL
                    );
                    CREATE INDEX IF NOT EXISTS event_log_by_session ON event_log(session_id, position);
                    CREATE INDEX IF NOT EXISTS event_log_by_time ON event_log(time_ms);
                    """)
            }
        }.pool
    }

    /// Appends the entries in one transaction; each entry's position is the row id of its insert.
    public func append(_ entries: [EventLogEntry]) throws(StorageError) -> [EventLogEntry] {
        guard !entries.isEmpty else { return [] }
        do {
            return try pool.write { db in
                let insert = try db.cachedStatement(sql: """
                    INSERT INTO event_log (session_id, epoch, seq, time_ms, kind, body) VALUES (?, ?, ?, ?, ?, ?)
                    """)
                return try entries.map { entry in
                    try insert.execute(arguments: [entry.session, entry.epoch, Int64(clamping: entry.seq), entry.timeMs,
                                                   entry.kind.rawValue, String(decoding: entry.body, as: UTF8.self)])
                    var e = entry
                    e.position = db.lastInsertedRowID
                    return e
                }
            }
        } catch {
            throw .writeFailed(SQLiteFile.reason(error))
        }
    }

    /// Up to `limit` entries of `session` in `range`, in its order.
    public func entries(of session: String, in range: EventLogRange, limit: Int) throws(StorageError) -> [EventLogEntry] {
        do {
            return try pool.read { db in
                try Row.fetchAll(db, sql: """
                    SELECT position, epoch, seq, time_ms, kind, body FROM event_log
                    WHERE session_id = ? AND position > ? AND position < ? AND time_ms >= ? AND time_ms < ?
                    ORDER BY position \(range.newestFirst ? "DESC" : "ASC") LIMIT ?
                    """, arguments: [session, range.after, range.before, range.since, range.until, max(0, limit)]).map { row in
                    EventLogEntry(position: row["position"], session: session, epoch: row["epoch"],
                                  seq: UInt64(max(0, row["seq"] as Int64)), timeMs: row["time_ms"],
                                  kind: EventLogEntry.Kind(rawValue: row["kind"]) ?? .event, body: Array((row["body"] as String).utf8))
                }
            }
        } catch {
            throw .readFailed(SQLiteFile.reason(error))
        }
    }

    /// In one transaction, deletes the rows older than `retention`'s cutoff at `nowMs`, then the
    /// rows of each of `sessions` beyond its newest `retention.maxEntries`; returns how many went.
    public func prune(_ retention: EventLogRetention, nowMs: Int64, sessions: Set<String>) throws(StorageError) -> Int {
        do {
            return try pool.write { db in
                try db.execute(sql: "DELETE FROM event_log WHERE time_ms < ?", arguments: [retention.cutoff(nowMs: nowMs)])
                var removed = db.changesCount
                let excess = try db.cachedStatement(sql: """
                    DELETE FROM event_log WHERE session_id = ?1 AND position <=
                        (SELECT position FROM event_log WHERE session_id = ?1 ORDER BY position DESC LIMIT 1 OFFSET ?2)
                    """)
                for id in sessions.sorted() {
                    try excess.execute(arguments: [id, retention.maxEntries])
                    removed += db.changesCount
                }
                return removed
            }
        } catch {
            throw .writeFailed(SQLiteFile.reason(error))
        }
    }

    /// Deletes `session`'s whole log.
    public func remove(session: String) throws(StorageError) {
        do {
            try pool.write { db in try db.execute(sql: "DELETE FROM event_log WHERE session_id = ?", arguments: [session]) }
        } catch {
            throw .writeFailed(SQLiteFile.reason(error))
        }
    }
}
