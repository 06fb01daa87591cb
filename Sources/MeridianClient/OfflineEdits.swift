import Foundation
import MeridianCore

/// An edit the app made with ``MeridianClient/submit(_:)``: sent at once when the client is
/// connected, queued while it is not, and sent in order after it reconnects (protocol §6.3).
public struct OfflineEdit: Hashable, Sendable {
    /// Unique among the client's edits (also across restarts when the queue has a file).
    public var id: Int
    /// The request, conditional on the revision of its annotation the app saw when it made it.
    public var request: SessionRequest
}

/// What became of an ``OfflineEdit``.
public enum EditOutcome: Hashable, Sendable {
    /// The server applied it.
    case applied(MeridianClient.Ack)
    /// Someone changed the annotation since the app saw it: nothing was changed. The
    /// annotation as it is now, to show beside the app's edit (keep theirs, or submit it again).
    case conflict(RevisionConflict)
    /// The server refused it for another reason (the annotation is gone, the role does not allow it, …).
    case refused(ClientError)
}

/// Where and how many edits wait while the client is disconnected.
public struct OfflineQueuePolicy: Sendable {
    /// At most this many edits wait; ``MeridianClient/submit(_:)`` throws ``ClientError/queueFull`` past it.
    public var limit: Int
    /// A file that keeps the waiting edits, so they survive the app's restart (nil: memory only).
    public var file: URL?

    /// A queue of at most `limit` edits, kept in `file` when given, else in memory only.
    public init(limit: Int = 256, file: URL? = nil) {
        self.limit = limit
        self.file = file
    }
}

extension MeridianClient {
    /// Sends `request` (an `annotationAdd`, `annotationUpdate` or `annotationRemove`) made
    /// conditional on the revision the mirror holds for its annotation, now if the client is
    /// connected, else after it reconnects; edits go out one at a time, in the order they were
    /// submitted. Its outcome comes as ``ClientUpdate/editSettled(_:_:)``. An edit whose answer
    /// a dropped connection lost is sent again after the reconnect (as a conditional edit it then
    /// meets its own change, reported as a conflict carrying it).
    @discardableResult
    public func submit(_ request: SessionRequest) throws(ClientError) -> OfflineEdit {
        switch request {
        case .annotationAdd, .annotationUpdate, .annotationRemove: break
        default: throw ClientError.notQueueable(request.type)
        }
        let edit = try shared.withLock { shared throws(ClientError) -> OfflineEdit in
            guard shared.edits.count < configuration.offline.limit else { throw ClientError.queueFull(configuration.offline.limit) }
            let edit = OfflineEdit(id: shared.nextEditID, request: request.conditional(on: shared.mirror))
            shared.nextEditID += 1
            shared.edits.append(edit)
            return edit
        }
        saveEdits()
        flushEdits()
        return edit
    }

    /// The edits not settled yet, oldest first.
    public var pendingEdits: [OfflineEdit] { shared.withLock { $0.edits } }

    /// Sends the waiting edits one by one while the client is connected; a lost connection
    /// leaves the rest (and the one in flight) for the next. Each is sent when the answer to the
    /// one before has come, from the thread that read it (no task waits for it).
    func flushEdits() {
        let start = shared.withLock { shared -> Bool in
            guard !shared.flushing, shared.transport != nil, !shared.edits.isEmpty else { return false }
            shared.flushing = true
            return true
        }
        if start { sendNextEdit() }
    }

    private func sendNextEdit() {
        guard let edit = shared.withLock({ $0.edits.first }) else { return stopFlushing() }
        post(edit.request) { [self] result in
            let outcome: EditOutcome
            switch result {
            case .success(let ack):
                outcome = .applied(ack)
            case .failure(let error as ClientError) where error.code != nil:
                outcome = error.conflict.map(EditOutcome.conflict) ?? .refused(error)
            case .failure:
                return stopFlushing() // disconnected, closed or unanswered: sent again after the reconnect
            }
            shared.withLock { $0.edits.removeAll { $0.id == edit.id } }
            saveEdits()
            emit(.editSettled(edit, outcome))
            sendNextEdit()
        }
    }

    private func stopFlushing() {
        shared.withLock { $0.flushing = false }
        // An edit submitted as the last one settled, or a connection back meanwhile.
        flushEdits()
    }

    /// Writes the waiting edits to the queue's file, if it has one.
    func saveEdits() {
        guard let file = configuration.offline.file else { return }
        let (edits, next) = shared.withLock { ($0.edits, $0.nextEditID) }
        let document = JSONValue.object([
            "next": .number(Double(next)),
            "edits": .array(edits.map { .object(["id": .number(Double($0.id)), "request": .object($0.request.fields.merging(["type": .string($0.request.type)]) { $1 })]) }),
        ])
        try? Data(document.encoded).write(to: file, options: .atomic)
    }

    /// The edits a queue file holds (none when it is missing or unreadable), and the next id.
    static func loadEdits(from file: URL?) -> (edits: [OfflineEdit], next: Int) {
        guard let file, let data = try? Data(contentsOf: file), let document = JSONValue.parse(Array(data)) else { return ([], 1) }
        let edits = (document["edits"]?.arrayValue ?? []).compactMap { item -> OfflineEdit? in
            guard let id = item["id"]?.uint64Value, let request = item["request"].flatMap(SessionRequest.init(queued:)) else { return nil }
            return OfflineEdit(id: Int(id), request: request)
        }
        let next = max(Int(document["next"]?.uint64Value ?? 1), (edits.map(\.id).max() ?? 0) + 1)
        return (edits, next)
    }
}

extension SessionRequest {
    /// A queued edit read back from its JSON form (the request as sent, with `type`).
    init?(queued m: JSONValue) {
        let revision = m["ifRevision"]?.uint64Value
        switch m["type"]?.stringValue {
        case "annotation.add":
            guard let a = m["annotation"] else { return nil }
            self = .annotationAdd(a)
        case "annotation.update":
            guard let id = m["id"]?.stringValue, case .object(let changes)? = m["changes"] else { return nil }
            self = .annotationUpdate(id: id, changes: changes, ifRevision: revision)
        case "annotation.remove":
            guard let id = m["id"]?.stringValue else { return nil }
            self = .annotationRemove(id: id, ifRevision: revision)
        default:
            return nil
        }
    }
}
