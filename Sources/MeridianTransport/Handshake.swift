/// What a client sent in its WebSocket upgrade request, as seen before the server accepts it.
/// Handed to ``TransportHandler/transport(_:shouldAccept:)`` and again to `didOpen`.
public struct Handshake: Sendable, Equatable {
    /// The peer's IP address (as lws reports it, e.g. "127.0.0.1" or "::1").
    public var peer: String
    /// The Origin header (browsers send it; other clients usually do not).
    public var origin: String?
    /// The Host header.
    public var host: String?
    /// The Authorization header, verbatim (e.g. "Bearer eyJ…").
    public var authorization: String?
    /// The request path without the query, e.g. "/".
    public var path: String
    /// The URL query arguments, decoded (e.g. `access_token`). A repeated name keeps its last value.
    public var query: [String: String]

    public init(
        peer: String, origin: String? = nil, host: String? = nil, authorization: String? = nil,
        path: String = "/", query: [String: String] = [:]
    ) {
        self.peer = peer
        self.origin = origin
        self.host = host
        self.authorization = authorization
        self.path = path
        self.query = query
    }
}

/// The handler's answer to an upgrade request.
public enum HandshakeVerdict: Sendable, Equatable {
    /// Complete the upgrade.
    case accept
    /// Answer with this HTTP status (4xx or 5xx, e.g. 401, 403, 429, 503; anything else
    /// becomes 403) and the JSON body `{"error":"handshake_refused","status":…,"message":reason}`,
    /// then close; the WebSocket is never opened.
    case refuse(status: Int, reason: String)
}
