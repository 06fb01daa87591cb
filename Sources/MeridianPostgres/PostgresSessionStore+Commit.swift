import MeridianCore
import MeridianProtocol
import MeridianStorage
import PostgresNIO

extension PostgresSessionStore {
    /// Applies the changes in order in one transaction. A change that waits longer than the
    /// lock timeout for a row another transaction holds rolls it back with
    /// ``StorageError/locked(session:_:)`` naming its session. A change with a fence is written only
    /// if the session's stored fence is not above it, and then stores it; otherwise the whole
    /// transaction is rolled back and ``StorageError/fenced(session:stored:offered:)`` names
    /// the session and both numbers. A change without a fence writes whatever is stored and
    /// leaves the stored fence as it is.
    public func commit(_ changes: [SessionChange]) throws(StorageError) {
        guard !changes.isEmpty else { return }
        do {
            try withConnection { c in
                try c.transaction {
                    for change in changes {
                        do {
                            switch change {
                            case .update(let u): try Self.write(u, on: c)
                            case .delete(let id, let fence): try Self.delete(id, fence: fence, on: c)
                            }
                        } catch let error as PSQLError where PostgresFailure.isLockTimeout(error) {
                            // Another writer (a former owner stalled in its transaction) holds the row.
                            throw StorageError.locked(session: change.sessionID, PostgresFailure.reason(error))
                        }
                    }
                }
            }
        } catch {
            throw failure(error, StorageError.writeFailed)
        }
    }

    private static func write(_ u: SessionUpdate, on c: BlockingConnection) throws {
        let settings = String(decoding: StoredForm.encode(u.settings), as: UTF8.self)
        let callout = u.callout.map { String(decoding: StoredForm.encode($0), as: UTF8.self) }
        let seq = Int64(clamping: u.seq)
        if let fence = u.fence {
            // The row stays locked until the transaction ends: no other node writes between
            // the check and the commit. No row changed: a newer owner's fence is stored.
            let written = try c.run("""
                INSERT INTO sessions (id, settings, callout, seq, epoch, fence)
                VALUES (\(u.id), \(settings), \(callout), \(seq), \(u.epoch), \(Int64(clamping: fence)))
                ON CONFLICT (id) DO UPDATE SET settings = excluded.settings, callout = excluded.callout,
                    seq = excluded.seq, epoch = excluded.epoch, fence = excluded.fence, deleted = false, updated_at = now()
                WHERE sessions.fence <= excluded.fence
                """)
            if written.metadata.rows == 0 { throw try fenced(u.id, offered: fence, on: c) }
        } else {
            try c.run("""
                INSERT INTO sessions (id, settings, callout, seq, epoch)
                VALUES (\(u.id), \(settings), \(callout), \(seq), \(u.epoch))
                ON CONFLICT (id) DO UPDATE SET settings = excluded.settings, callout = excluded.callout,
                    seq = excluded.seq, epoch = excluded.epoch, deleted = false, updated_at = now()
                """)
        }
        if u.replacesAnnotations {
            try c.run("DELETE FROM annotations WHERE session_id = \(u.id)")
        } else if !u.removed.isEmpty {
            try c.run("DELETE FROM annotations WHERE session_id = \(u.id) AND id = ANY(\(u.removed))")
        }
        try writeHistories(u, on: c)
        guard !u.upserted.isEmpty else { return }
        // One statement may not write a row twice: the last of an id wins, as in order.
        var ids: [String] = [], bodies: [String] = [], position: [String: Int] = [:]
        for a in u.upserted {
            let body = String(decoding: StoredForm.encode(a), as: UTF8.self)
            if let i = position[a.id] {
                bodies[i] = body
            } else {
                position[a.id] = ids.count
                ids.append(a.id)
                bodies.append(body)
            }
        }
        try c.run("""
            INSERT INTO annotations (session_id, id, body)
            SELECT \(u.id), a.id, a.body FROM unnest(\(ids)::text[], \(bodies)::text[]) AS a(id, body)
            ON CONFLICT (session_id, id) DO UPDATE SET body = excluded.body
            """)
    }

    private static func writeHistories(_ u: SessionUpdate, on c: BlockingConnection) throws {
        if u.replacesAnnotations {
            try c.run("DELETE FROM undo_histories WHERE session_id = \(u.id)")
        }
        guard !u.histories.isEmpty else { return }
        let forgotten = u.histories.compactMap { $0.value == nil ? $0.key : nil }
        if !forgotten.isEmpty {
            try c.run("DELETE FROM undo_histories WHERE session_id = \(u.id) AND participant = ANY(\(forgotten))")
        }
        let written = u.histories.compactMap { pid, h in h.map { (pid, String(decoding: StoredForm.encode($0), as: UTF8.self)) } }
        guard !written.isEmpty else { return }
        try c.run("""
            INSERT INTO undo_histories (session_id, participant, body)
            SELECT \(u.id), h.participant, h.body FROM unnest(\(written.map(\.0))::text[], \(written.map(\.1))::text[]) AS h(participant, body)
            ON CONFLICT (session_id, participant) DO UPDATE SET body = excluded.body
            """)
    }

    /// The session's row stays, marked deleted and with its fence (raised to `fence`), so that a
    /// former owner's later write is refused for it; its annotations go.
    private static func delete(_ id: String, fence: UInt64?, on c: BlockingConnection) throws {
        if let fence {
            // Locked until the transaction ends, as an update's row is.
            let rows = try c.run("SELECT fence FROM sessions WHERE id = \(id) FOR UPDATE")
            if let stored = try rows.first?.decode(Int64.self), stored > Int64(clamping: fence) {
                throw StorageError.fenced(session: id, stored: UInt64(stored), offered: fence)
            }
        }
        let offered = Int64(clamping: fence ?? 0)
        try c.run("""
            UPDATE sessions SET deleted = true, callout = NULL, fence = greatest(fence, \(offered)), updated_at = now()
            WHERE id = \(id)
            """)
        try c.run("DELETE FROM annotations WHERE session_id = \(id)")
        try c.run("DELETE FROM undo_histories WHERE session_id = \(id)")
    }

    private static func fenced(_ id: String, offered: UInt64, on c: BlockingConnection) throws -> StorageError {
        let stored = try c.run("SELECT fence FROM sessions WHERE id = \(id)").first?.decode(Int64.self) ?? 0
        return .fenced(session: id, stored: UInt64(max(0, stored)), offered: offered)
    }
}
