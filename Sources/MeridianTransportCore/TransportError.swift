/// Errors thrown by the transport. A struct around a private enum so cases can be added later.
public struct TransportError: Error, CustomStringConvertible, Equatable {
    private enum Kind: Equatable {
        case bindFailed(String)
        case alreadyStarted
        case connectFailed(String)
        case timeout
        case notConnected
        case invalidConfiguration(String)
    }

    private let kind: Kind

    private init(_ kind: Kind) { self.kind = kind }

    /// The server could not create its context or listen on the configured address.
    public static func bindFailed(_ detail: String) -> TransportError { TransportError(.bindFailed(detail)) }
    /// `start()` or `connect()` was called twice.
    public static let alreadyStarted = TransportError(.alreadyStarted)
    /// The client connection or WebSocket handshake failed or was refused.
    public static func connectFailed(_ detail: String) -> TransportError { TransportError(.connectFailed(detail)) }
    /// A wait ran out of time.
    public static let timeout = TransportError(.timeout)
    /// The client is not connected.
    public static let notConnected = TransportError(.notConnected)

    /// The configuration cannot work (e.g. a TLS certificate file that cannot be read).
    public static func invalidConfiguration(_ detail: String) -> TransportError { TransportError(.invalidConfiguration(detail)) }

    /// True for ``connectFailed(_:)`` errors, whatever their detail.
    public var isConnectFailure: Bool {
        if case .connectFailed = kind { return true }
        return false
    }

    public var description: String {
        switch kind {
        case .bindFailed(let detail): return "could not listen: \(detail)"
        case .alreadyStarted: return "already started"
        case .connectFailed(let detail): return "WebSocket connection failed: \(detail)"
        case .timeout: return "timed out"
        case .notConnected: return "not connected"
        case .invalidConfiguration(let detail): return "invalid transport configuration: \(detail)"
        }
    }
}
