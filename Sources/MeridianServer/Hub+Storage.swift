import Logging
import MeridianCore
import MeridianProtocol
import MeridianStorage
import MeridianTransport

/// Bookkeeping of the hub for storage: writes in flight and idle sessions.
struct Durability {
    let slot: StorageSlot
    /// Acks waiting for a commit, per connection (later acks wait behind them).
    var pendingAcks: [ConnectionID: Int] = [:]
    /// Uncommitted writes per session: such a session is never unloaded.
    var pendingWrites: [String: Int] = [:]
    /// Sessions whose last write failed: the next write stores the whole record.
    var needsFullWrite: Set<String> = []
    /// When each loaded session was first seen without members.
    var emptySince: [String: Duration] = [:]
}

extension Hub {
    // MARK: Loading

    /// The session from storage (new epoch) or a new one, made room for.
    func openSession(_ id: String, create: Bool = true, on server: WebSocketServer) -> Result<SessionHost, SessionError> {
        guard let opened = durability.slot.current else {
            return .failure(SessionError(.storageUnavailable, "session storage is not open"))
        }
        if sessions.count >= configuration.storage.maxLoadedSessions && !unloadLongestIdle(on: server) {
            return .failure(SessionError(.capacityExceeded, "the server holds \(sessions.count) sessions, its limit; try again later"))
        }
        var rng = SystemRandomNumberGenerator()
        let epoch = String(rng.next() as UInt64, radix: 16)
        let stored: StoredSession?
        do throws(StorageError) {
            stored = try opened.store.load(id)
        } catch {
            logger.error("session load failed", metadata: ["session": "\(id)", "error": "\(error)"])
            return .failure(SessionError(.storageUnavailable, "session \(id) cannot be loaded: \(error.message)"))
        }
        if stored == nil && !create { return .failure(SessionError(.sessionNotFound, "no session \(id): a hidden join watches a session and never creates one")) }
        let session = stored.map { Session(restoring: $0.record, epoch: epoch, limits: configuration.limits) }
            ?? Session(id: id, epoch: epoch, settings: configuration.sessionDefaults, limits: configuration.limits)
        let host = SessionHost(session: session, historySize: configuration.historySize)
        host.eventLog = SessionLog(writer: eventLog.writer, checkpointEvery: configuration.eventLog.checkpointEvery)
        sessions[id] = host
        logger.info("session opened", metadata: [
            "session": "\(id)", "epoch": "\(epoch)", "restored": "\(stored != nil)",
            "annotations": "\(session.annotations.count)", "seq": "\(session.seq)",
        ])
        return .success(host)
    }

    /// Unloads the empty session idle for longest; false if none can go.
    private func unloadLongestIdle(on server: WebSocketServer) -> Bool {
        let now = server.now
        let candidate = sessions.filter { id, host in host.isEmpty && canUnload(id) }
            .min { (durability.emptySince[$0.key] ?? now) < (durability.emptySince[$1.key] ?? now) }
        guard let (id, _) = candidate else { return false }
        unload(id, reason: "capacity")
        return true
    }

    private func canUnload(_ id: String) -> Bool {
        durability.pendingWrites[id, default: 0] == 0 && !durability.needsFullWrite.contains(id)
    }

    private func unload(_ id: String, reason: String) {
        sessions[id] = nil
        durability.emptySince[id] = nil
        logger.info("session unloaded", metadata: ["session": "\(id)", "reason": "\(reason)"])
    }

    /// Unloads sessions empty for longer than the idle time; retries failed writes.
    func unloadIdleSessions(on server: WebSocketServer) {
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
    func persist(_ events: [Emitted], of host: SessionHost, ack: PendingAck? = nil, on server: WebSocketServer) {
        let change = durableChange(events, of: host)
        if change == nil, let ack, durability.pendingAcks[ack.connection, default: 0] == 0 {
            return server.send(ack.frame, to: ack.connection)
        }
        guard change != nil || ack != nil else { return }
        submit(change, of: host.session.id, ack: ack, on: server)
    }

    /// Sends an ack that needs no commit, behind any of its connection's acks still waiting for one.
    func acknowledge(_ ack: PendingAck, on server: WebSocketServer) {
        guard durability.pendingAcks[ack.connection, default: 0] > 0 else { return server.send(ack.frame, to: ack.connection) }
        // A barrier: it writes nothing, so the session named does not matter.
        submit(nil, of: connections[ack.connection]?.sessionID ?? "", ack: ack, on: server)
    }

    private func submit(_ change: SessionChange?, of sessionID: String, ack: PendingAck?, on server: WebSocketServer) {
        guard let opened = durability.slot.current else { return }
        guard let writer = opened.writer else {
            var result: Result<Void, StorageError> = .success(())
            if let change {
                do throws(StorageError) { try opened.store.commit([change]) } catch { result = .failure(error) }
            }
            return finish(result, sessionID: sessionID, wrote: change != nil, ack: ack, on: server)
        }
        if change != nil { durability.pendingWrites[sessionID, default: 0] += 1 }
        if let ack { durability.pendingAcks[ack.connection, default: 0] += 1 }
        let hub = LoopBound(value: self)
        let wrote = change != nil
        writer.submit(change) { result in
            server.execute { hub.value.finish(result, sessionID: sessionID, wrote: wrote, ack: ack, counted: true, on: server) }
        }
    }

    private func finish(
        _ result: Result<Void, StorageError>, sessionID: String, wrote: Bool, ack: PendingAck?, counted: Bool = false,
        on server: WebSocketServer
    ) {
        if counted {
            if wrote { decrement(&durability.pendingWrites, sessionID) }
            if let ack { decrement(&durability.pendingAcks, ack.connection) }
        }
        switch result {
        case .success:
            if wrote { durability.needsFullWrite.remove(sessionID) }
            if let ack, connections[ack.connection] != nil { server.send(ack.frame, to: ack.connection) }
        case .failure(let error):
            durability.needsFullWrite.insert(sessionID)
            logger.error("storage write failed", metadata: ["session": "\(sessionID)", "error": "\(error)"])
            guard let ack, connections[ack.connection] != nil else { return }
            logger.info("refused", metadata: [
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
        let s = host.session
        var touched: Set<String> = []
        var durable = false
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
        if durability.needsFullWrite.contains(s.id) {
            return .update(SessionUpdate(record: s.record, epoch: s.epoch))
        }
        let ids = touched.sorted()
        return .update(SessionUpdate(
            id: s.id, epoch: s.epoch, seq: s.seq, settings: s.settings, callout: s.callout,
            upserted: ids.compactMap { s.committedAnnotation($0) },
            removed: ids.filter { s.annotations[$0] == nil }))
    }
}

/// An ack that is sent once its change is committed.
struct PendingAck: Sendable {
    var connection: ConnectionID
    var frame: OutboundFrame
    var ref: RequestRef
    var request: String
}
