import MeridianCore

/// Why a client call failed. Cases may be added; compare with the static members.
public struct ClientError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Kind: Hashable, Sendable {
        case timeout(String)
        case disconnected
        case closed
        case rejected(code: String, message: String, field: String?, conflict: RevisionConflict?, holder: String? = nil)
        case protocolViolation(String)
        case queueFull(Int)
        case notQueueable(String)
        case invalidURL(String)
        case connectionFailed(String)
    }

    private let kind: Kind

    /// No answer to the request arrived in time.
    public static func timeout(_ request: String) -> ClientError { ClientError(kind: .timeout(request)) }
    /// The connection dropped before the request was answered (it may or may not have been applied).
    public static let disconnected = ClientError(kind: .disconnected)
    /// The client was closed.
    public static let closed = ClientError(kind: .closed)
    /// The server answered with an `error` (§9 of the protocol).
    public static func rejected(code: String, message: String, field: String?, holder: String? = nil) -> ClientError {
        ClientError(kind: .rejected(code: code, message: message, field: field, conflict: nil, holder: holder))
    }
    /// The server refused a conditional request with `revision_conflict` (§6.3): the annotation
    /// changed since the revision the request named.
    public static func revisionConflict(message: String, revision: UInt64, annotation: JSONValue) -> ClientError {
        ClientError(kind: .rejected(code: "revision_conflict", message: message, field: "ifRevision",
                                    conflict: RevisionConflict(revision: revision, annotation: annotation)))
    }
    /// The server sent something the client cannot read.
    public static func protocolViolation(_ detail: String) -> ClientError { ClientError(kind: .protocolViolation(detail)) }
    /// ``MeridianClient/submit(_:)`` with as many edits waiting as the queue holds.
    public static func queueFull(_ limit: Int) -> ClientError { ClientError(kind: .queueFull(limit)) }
    /// ``MeridianClient/submit(_:)`` with a request that is not an annotation edit.
    public static func notQueueable(_ request: String) -> ClientError { ClientError(kind: .notQueueable(request)) }

    /// A server URL that is not `ws://` or `wss://` with a host, or TLS settings that cannot be used.
    public static func invalidURL(_ detail: String) -> ClientError { ClientError(kind: .invalidURL(detail)) }
    /// The connection could not be opened: refused, unreachable, the TLS handshake or the WebSocket upgrade failed.
    public static func connectionFailed(_ detail: String) -> ClientError { ClientError(kind: .connectionFailed(detail)) }

    /// The server's error code when the request was refused.
    public var code: String? {
        if case .rejected(let code, _, _, _, _) = kind { return code }
        return nil
    }

    /// The participant holding what was asked for (`drag_conflict`, `being_dragged`, `camera_lease_held`).
    public var holder: String? {
        if case .rejected(_, _, _, _, let holder) = kind { return holder }
        return nil
    }

    /// The field the server named when the request was refused.
    public var field: String? {
        if case .rejected(_, _, let field, _, _) = kind { return field }
        return nil
    }

    /// With `revision_conflict`: the annotation as it is now (an §8.6 object) and its revision,
    /// to show beside the change that was refused.
    public var conflict: RevisionConflict? {
        if case .rejected(_, _, _, let conflict, _) = kind { return conflict }
        return nil
    }

    /// The failure in words: the request that timed out, or the server's code, field and message.
    public var description: String {
        switch kind {
        case .timeout(let request): return "no answer to \(request) in time"
        case .disconnected: return "the connection dropped before the answer"
        case .closed: return "the client is closed"
        case .rejected(let code, let message, let field, _, _):
            return "refused (\(code))\(field.map { " at \($0)" } ?? ""): \(message)"
        case .protocolViolation(let detail): return "unreadable server message: \(detail)"
        case .queueFull(let limit): return "\(limit) edits are waiting already (the queue's limit)"
        case .invalidURL(let detail): return "cannot connect there: \(detail)"
        case .connectionFailed(let detail): return "the connection failed: \(detail)"
        case .notQueueable(let request): return "\(request) is not an edit the client queues (annotation.add, annotation.update, annotation.remove)"
        }
    }
}

/// The current state of an annotation a conditional request was refused for.
public struct RevisionConflict: Hashable, Sendable {
    /// The annotation's current revision.
    public var revision: UInt64
    /// The annotation as it is now.
    public var annotation: JSONValue
}
