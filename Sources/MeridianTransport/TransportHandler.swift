/// Receives the server's events. Every method is called only on the server's service thread,
/// with the server's ``ServerLoop``: what the handler may send, close and read there.
public protocol TransportHandler: AnyObject {
    /// Decides whether an upgrade request becomes a WebSocket connection. Called after the
    /// server's own checks (subprotocol, Origin allowlist, connection limits) passed. It runs
    /// on the service thread, so it must not block: verify a token locally, do not call out.
    /// The default accepts everything.
    func transport(_ server: ServerLoop, shouldAccept handshake: Handshake) -> HandshakeVerdict
    /// A WebSocket connection completed its handshake; `handshake` is the one that was accepted.
    func transport(_ server: ServerLoop, didOpen connection: ConnectionID, handshake: Handshake)
    /// One whole text message arrived. `message` is valid only during the call: the server
    /// reuses its memory for the next one.
    func transport(_ server: ServerLoop, didReceive message: UnsafeRawBufferPointer, from connection: ConnectionID)
    /// The connection is gone, called once. `code` is the code the server closed with (4008,
    /// 1009, 1001, …), else the peer's close code, or nil if there was none. A close the server
    /// decided is reported at the next tick, while lws may still be delivering the close frame.
    func transport(_ server: ServerLoop, didClose connection: ConnectionID, code: UInt16?, reason: String)
    /// Called every `tickInterval`.
    func transportTick(_ server: ServerLoop)
    /// Answers an HTTP request other than /healthz and /readyz through `responder`, during the
    /// call or later from any thread (the service thread goes on serving meanwhile). The
    /// default answers with ``transport(_:handle:)``.
    func transport(_ server: ServerLoop, handle request: HTTPRequest, responder: HTTPResponder)
    /// Answers an HTTP request other than /healthz and /readyz at once; nil gives a JSON 404.
    /// Used by the default of ``transport(_:handle:responder:)``; the default answers nil.
    func transport(_ server: ServerLoop, handle request: HTTPRequest) -> HTTPResponse?
}

extension TransportHandler {
    /// Accepts every upgrade that passed the server's own checks.
    public func transport(_ server: ServerLoop, shouldAccept handshake: Handshake) -> HandshakeVerdict {
        .accept
    }

    /// Answers at once with ``transport(_:handle:)``, or 404.
    public func transport(_ server: ServerLoop, handle request: HTTPRequest, responder: HTTPResponder) {
        responder.respond(transport(server, handle: request) ?? .notFound)
    }

    /// No answer of its own: 404.
    public func transport(_ server: ServerLoop, handle request: HTTPRequest) -> HTTPResponse? { nil }
}
