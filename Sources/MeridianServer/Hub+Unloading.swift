import Logging
import MeridianCore
import MeridianProtocol
import MeridianStorage
import MeridianTransport

/// Sessions leaving memory: idle, to make room, or because this node lost their lease.
extension Hub {
    /// Unloads the empty session idle for longest; false if none can go.
    func unloadLongestIdle(on server: any Outbound) -> Bool {
        let now = server.now
        let candidate = sessions.filter { id, host in host.isEmpty && canUnload(id) }
            .min { (durability.emptySince[$0.key] ?? now) < (durability.emptySince[$1.key] ?? now) }
        guard let (id, _) = candidate else { return false }
        unload(id, reason: "capacity")
        return true
    }

    /// No write of it in flight or owed, and no HTTP API write (a delete) waiting on it.
    private func canUnload(_ id: String) -> Bool {
        writes.isSettled(id) && durability.gates[id] == nil
    }

    private func unload(_ id: String, reason: String) {
        sessions[id] = nil
        durability.emptySince[id] = nil
        durability.fences[id] = nil
        place?.cluster?.release(id)
        logger.info("session unloaded", metadata: ["session": "\(id)", "reason": "\(reason)"])
    }

    /// This node lost the session's lease (a cluster): it stops taking the session's commands at
    /// once. Its members are closed with 4012 and join again, at the session's new owner.
    func leaseLost(_ id: String, on server: any Outbound) {
        guard let host = sessions.removeValue(forKey: id) else { return }
        durability.emptySince[id] = nil
        durability.fences[id] = nil
        logger.warning("session lease lost: unloaded", metadata: ["session": "\(id)", "members": "\(host.memberIDs.count)"])
        for member in host.memberIDs {
            update(member, .left, on: server)
            server.close(member, code: CloseCode.sessionMoved, reason: "session \(id) moved to another node")
        }
    }

    /// Unloads sessions empty for longer than the idle time; retries failed writes.
    func unloadIdleSessions(on server: any Outbound) {
        let now = server.now
        for (id, host) in sessions {
            guard host.isEmpty else {
                durability.emptySince[id] = nil
                continue
            }
            guard let since = durability.emptySince[id] else {
                durability.emptySince[id] = now
                continue
            }
            guard now - since >= configuration.storage.idleUnloadAfter else { continue }
            if writes.owesFullWrite(id) {
                writes.submit(.update(SessionUpdate(record: host.session.record, epoch: host.session.epoch)), of: id, ack: nil, on: server)
            } else if canUnload(id) {
                unload(id, reason: "idle")
            }
        }
    }
}
