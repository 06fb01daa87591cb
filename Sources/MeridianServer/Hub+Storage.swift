import Logging
import MeridianCore
import MeridianProtocol
import MeridianStorage
import MeridianTransport

/// Bookkeeping of the hub for storage: loads and writes in flight, idle sessions.
struct Durability {
    let slot: StorageSlot
    /// Sessions with a load or an HTTP API write in flight, and what waits for each.
    var gates: [String: SessionGate] = [:]
    /// Loads in flight: they count towards the loaded-sessions limit.
    var loads = 0
    /// The ticket of the next join to wait for a load.
    var nextLoadTicket: UInt64 = 1
    /// Acks waiting for a commit, per connection (later acks wait behind them).
    var pendingAcks: [ConnectionID: Int] = [:]
    /// Uncommitted writes per session: such a session is never unloaded.
    var pendingWrites: [String: Int] = [:]
    /// Sessions whose last write failed: the next write stores the whole record.
    var needsFullWrite: Set<String> = []
    /// When each loaded session was first seen without members.
    var emptySince: [String: Duration] = [:]
    /// In a cluster, the fencing number of this node's lease on each session it loaded.
    var fences: [String: UInt64] = [:]
}

extension Hub {
    // MARK: Unloading

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
        durability.pendingWrites[id, default: 0] == 0 && !durability.needsFullWrite.contains(id) && durability.gates[id] == nil
    }

    private func unload(_ id: String, reason: String) {
        sessions[id] = nil
        durability.emptySince[id] = nil
        durability.fences[id] = nil
        place?.cluster?.release(id)
        logger.info("session unloaded", metadata: ["session": "\(id)", "reason": "\(reason)"])
    }

    /// In a cluster, `change` under the fencing number of this node's lease on the session: the
    /// shared store refuses it once a newer owner has written.
    private func fenced(_ change: SessionChange, of id: String) -> SessionChange {
        guard let fence = sessions[id]?.fence ?? durability.fences[id] else { return change }
        switch change {
        case .update(var update):
            update.fence = fence
            return .update(update)
        case .delete(let id, _):
            return .delete(id: id, fence: fence)
        }
    }

    /// This node lost the session's lease (a cluster): it stops taking the session's commands at
    /// once. Its members are closed with 4012 and join again, at the session's new owner.
    func leaseLost(_ id: String, on server: any Outbound) {
        guard let host = sessions.removeValue(forKey: id) else { return }
        durability.emptySince[id] = nil
        durability.fences[id] = nil
        logger.warning("session lease lost: unloaded", metadata: ["session": "\(id)", "members": "\(host.memberIDs.count)"])
        for member in host.memberIDs {
            connections[member]?.left()
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
            if durability.needsFullWrite.contains(id), durability.pendingWrites[id, default: 0] == 0 {
                submit(.update(SessionUpdate(record: host.session.record, epoch: host.session.epoch)), of: id, ack: nil, on: server)
            } else if canUnload(id) {
                unload(id, reason: "idle")
            }
        }
    }

    // MARK: Writing

    /// Stores the durable part of `events`, then acks (or, if the commit
    /// fails, answers `storage_unavailable`). Broadcasts are not held back.
    func persist(_ events: [Emitted], of host: SessionHost, ack: PendingAck? = nil, on server: any Outbound) {
        let change = durableChange(events, of: host)
        if change == nil, let ack, durability.pendingAcks[ack.connection, default: 0] == 0 {
            return server.send(ack.frame, to: ack.connection)
        }
        guard change != nil || ack != nil else { return }
        submit(change, of: host.session.id, ack: ack, on: server)
    }

    /// Sends an ack that needs no commit, behind any of its connection's acks still waiting for one.
    func acknowledge(_ ack: PendingAck, on server: any Outbound) {
        guard durability.pendingAcks[ack.connection, default: 0] > 0 else { return server.send(ack.frame, to: ack.connection) }
        // A barrier: it writes nothing, so the session named does not matter.
        submit(nil, of: connections[ack.connection]?.sessionID ?? "", ack: ack, on: server)
    }

    /// Queues `change` for the writer; `then` runs on the service thread once it is committed
    /// (or failed), after the ack. Without a writer (in memory) it commits at once.
    func submit(
        _ change: SessionChange?, of sessionID: String, ack: PendingAck?, on server: any Outbound,
        then: ((Result<Void, StorageError>) -> Void)? = nil
    ) {
        guard let opened = durability.slot.current else {
            then?(.failure(.writeFailed("the store is not open")))
            return
        }
        let change = change.map { fenced($0, of: sessionID) }
        guard let writer = opened.writer else {
            var result: Result<Void, StorageError> = .success(())
            if let change {
                do throws(StorageError) { try opened.store.commit([change]) } catch { result = .failure(error) }
            }
            finish(result, sessionID: sessionID, wrote: change != nil, ack: ack, on: server)
            then?(result)
            return
        }
        if change != nil { durability.pendingWrites[sessionID, default: 0] += 1 }
        if let ack { durability.pendingAcks[ack.connection, default: 0] += 1 }
        let wrote = change != nil
        writer.submit(change, completion: returning(to: server) { hub, server, result in
            hub.finish(result, sessionID: sessionID, wrote: wrote, ack: ack, counted: true, on: server)
            then?(result)
        })
    }

    /// Commits one change of a session that is not loaded (an HTTP API create or delete,
    /// under the session's gate) behind everything queued; `then` runs on the service thread.
    func commitUnloaded(_ change: SessionChange, on server: any Outbound, then: @escaping (Result<Void, StorageError>) -> Void) {
        guard let opened = durability.slot.current else { return then(.failure(.writeFailed("the store is not open"))) }
        guard let writer = opened.writer else {
            do throws(StorageError) { try opened.store.commit([change]) } catch { return then(.failure(error)) }
            return then(.success(()))
        }
        writer.submit(change, completion: returning(to: server) { _, _, result in then(result) })
    }

    private func finish(
        _ result: Result<Void, StorageError>, sessionID: String, wrote: Bool, ack: PendingAck?, counted: Bool = false,
        on server: any Outbound
    ) {
        if counted {
            if wrote { decrement(&durability.pendingWrites, sessionID) }
            if let ack { decrement(&durability.pendingAcks, ack.connection) }
        }
        if case .failure = result { durability.slot.note(result) }
        switch result {
        case .success:
            if wrote { durability.needsFullWrite.remove(sessionID) }
            if let ack, connections[ack.connection] != nil { server.send(ack.frame, to: ack.connection) }
        case .failure(let error):
            durability.needsFullWrite.insert(sessionID)
            logger.error("storage write failed", metadata: ["session": "\(sessionID)", "error": "\(error)"])
            guard let ack, connections[ack.connection] != nil else { return }
            logger.debug("refused", metadata: [
                "connection": "\(ack.connection)", "request": "\(ack.request)",
                "code": "\(SessionError.Code.storageUnavailable.rawValue)", "reason": "\(error.message)",
            ])
            let frame = ServerMessage.error(
                ref: ack.ref, code: .storageUnavailable,
                message: "\(ack.request) was applied but could not be stored (\(error.message)); it may be lost on restart")
            server.send(OutboundFrame(text: frame), to: ack.connection)
        }
    }

    private func decrement<K: Hashable>(_ counts: inout [K: Int], _ key: K) {
        let n = counts[key, default: 1] - 1
        counts[key] = n > 0 ? n : nil
    }

    /// The stored form of what `events` changed, nil if nothing durable.
    private func durableChange(_ events: [Emitted], of host: SessionHost) -> SessionChange? {
        let histories = host.session.takeChangedHistories()
        var touched: Set<String> = []
        var durable = !histories.isEmpty
        for e in events where !e.isTransient {
            switch e.event {
            case .annotationAdded(let a), .annotationUpdated(let a):
                touched.insert(a.id)
                durable = true
            case .annotationRemoved(let id):
                touched.insert(id)
                durable = true
            case .drag(let id, _, .none, _, _):
                touched.insert(id)
                durable = true
            case .calloutShown, .calloutHidden, .settings:
                durable = true
            default:
                break
            }
        }
        guard durable else { return nil }
        // Read from the host only now: a transient move, the usual broadcast, copies nothing.
        let s = host.session
        if durability.needsFullWrite.contains(s.id) {
            return .update(SessionUpdate(record: s.record, epoch: s.epoch))
        }
        let ids = touched.sorted()
        return .update(SessionUpdate(
            id: s.id, epoch: s.epoch, seq: s.seq, settings: s.settings, callout: s.callout,
            upserted: ids.compactMap { s.committedAnnotation($0) },
            removed: ids.filter { s.annotations[$0] == nil }, histories: histories))
    }
}

/// An ack that is sent once its change is committed. It belongs to the hub's thread (its frame
/// is not `Sendable`): it waits for the writer inside the hub's ``LoopBound`` completion.
struct PendingAck {
    var connection: ConnectionID
    var frame: OutboundFrame
    var ref: RequestRef
    var request: String
}
