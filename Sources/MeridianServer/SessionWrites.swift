import Logging
import MeridianCore
import MeridianProtocol
import MeridianStorage
import MeridianTransport

/// A hub's writes to the store: the durable part of each change goes to the storage writer,
/// and a request's ack waits for its commit (behind the connection's earlier acks). A change
/// that fails is answered `storage_unavailable`, and the session's next write stores its whole
/// record. Broadcasts are never held back. Lives on the hub's thread; commits come back to it.
final class SessionWrites {
    let slot: StorageSlot
    private let logger: Logger
    /// The fencing number of this node's lease on a session, in a cluster.
    private let fence: (String) -> UInt64?
    /// Whether a connection is still the hub's: an ack for one that closed is not sent.
    private let isOpen: (ConnectionID) -> Bool
    /// Acks waiting for a commit, per connection (later acks wait behind them).
    private var pendingAcks: [ConnectionID: Int] = [:]
    /// Uncommitted writes per session: such a session is never unloaded.
    private var pendingWrites: [String: Int] = [:]
    /// Sessions whose last write failed: the next write stores the whole record.
    private var needsFullWrite: Set<String> = []

    init(slot: StorageSlot, logger: Logger, fence: @escaping (String) -> UInt64?, isOpen: @escaping (ConnectionID) -> Bool) {
        self.slot = slot
        self.logger = logger
        self.fence = fence
        self.isOpen = isOpen
    }

    /// Nothing of `id` is in flight or owed to the store.
    func isSettled(_ id: String) -> Bool {
        pendingWrites[id, default: 0] == 0 && !needsFullWrite.contains(id)
    }

    /// Its last write failed and none is in flight: the whole record is owed.
    func owesFullWrite(_ id: String) -> Bool {
        needsFullWrite.contains(id) && pendingWrites[id, default: 0] == 0
    }

    /// A deleted session owes nothing.
    func forget(_ id: String) {
        needsFullWrite.remove(id)
    }

    /// Stores the durable part of `events`, then acks (or, if the commit fails, answers
    /// `storage_unavailable`).
    func persist(_ events: [Emitted], of host: SessionHost, ack: PendingAck? = nil, on server: any Outbound) {
        let change = durableChange(events, of: host)
        if change == nil, let ack, pendingAcks[ack.connection, default: 0] == 0 {
            return server.send(ack.frame, to: ack.connection)
        }
        guard change != nil || ack != nil else { return }
        submit(change, of: host.session.id, ack: ack, on: server)
    }

    /// Sends an ack that needs no commit, behind any of its connection's acks still waiting for
    /// one (a barrier that writes nothing; should it fail, `session` owes its whole record).
    func acknowledge(_ ack: PendingAck, in session: String?, on server: any Outbound) {
        guard pendingAcks[ack.connection, default: 0] > 0 else { return server.send(ack.frame, to: ack.connection) }
        submit(nil, of: session ?? "", ack: ack, on: server)
    }

    /// Queues `change` for the writer; `then` runs on the service thread once it is committed
    /// (or failed), after the ack. Without a writer (in memory) it commits at once.
    func submit(
        _ change: SessionChange?, of sessionID: String, ack: PendingAck?, on server: any Outbound,
        then: ((Result<Void, StorageError>) -> Void)? = nil
    ) {
        guard let opened = slot.current else {
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
        if change != nil { pendingWrites[sessionID, default: 0] += 1 }
        if let ack { pendingAcks[ack.connection, default: 0] += 1 }
        let wrote = change != nil
        writer.submit(change, completion: returning(self, to: server) { writes, server, result in
            writes.finish(result, sessionID: sessionID, wrote: wrote, ack: ack, counted: true, on: server)
            then?(result)
        })
    }

    /// Commits one change of a session that is not loaded (an HTTP API create or delete,
    /// under the session's gate) behind everything queued; `then` runs on the service thread.
    func commitUnloaded(_ change: SessionChange, on server: any Outbound, then: @escaping (Result<Void, StorageError>) -> Void) {
        guard let opened = slot.current else { return then(.failure(.writeFailed("the store is not open"))) }
        guard let writer = opened.writer else {
            do throws(StorageError) { try opened.store.commit([change]) } catch { return then(.failure(error)) }
            return then(.success(()))
        }
        writer.submit(change, completion: returning(self, to: server) { _, _, result in then(result) })
    }

    /// In a cluster, `change` under the fencing number of this node's lease on the session: the
    /// shared store refuses it once a newer owner has written.
    private func fenced(_ change: SessionChange, of id: String) -> SessionChange {
        guard let fence = fence(id) else { return change }
        switch change {
        case .update(var update):
            update.fence = fence
            return .update(update)
        case .delete(let id, _):
            return .delete(id: id, fence: fence)
        }
    }

    private func finish(
        _ result: Result<Void, StorageError>, sessionID: String, wrote: Bool, ack: PendingAck?, counted: Bool = false,
        on server: any Outbound
    ) {
        if counted {
            if wrote { Self.decrement(&pendingWrites, sessionID) }
            if let ack { Self.decrement(&pendingAcks, ack.connection) }
        }
        if case .failure = result { slot.note(result) }
        switch result {
        case .success:
            if wrote { needsFullWrite.remove(sessionID) }
            if let ack, isOpen(ack.connection) { server.send(ack.frame, to: ack.connection) }
        case .failure(let error):
            needsFullWrite.insert(sessionID)
            logger.error("storage write failed", metadata: ["session": "\(sessionID)", "error": "\(error)"])
            guard let ack, isOpen(ack.connection) else { return }
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

    private static func decrement<K: Hashable>(_ counts: inout [K: Int], _ key: K) {
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
        if needsFullWrite.contains(s.id) {
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
/// is not `Sendable`): it waits for the writer inside a ``LoopBound`` completion.
struct PendingAck {
    var connection: ConnectionID
    var frame: OutboundFrame
    var ref: RequestRef
    var request: String
}
