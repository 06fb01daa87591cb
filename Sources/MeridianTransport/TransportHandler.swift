/// Receives the server's events. Every method is called only on the server's service thread,
/// where the handler may call the service-thread-only methods of ``WebSocketServer``.
public protocol TransportHandler: AnyObject {
    /// A WebSocket connection completed its handshake.
    func transport(_ server: WebSocketServer, didOpen connection: ConnectionID, peer: String)
    /// One whole text message arrived.
    func transport(_ server: WebSocketServer, didReceive message: [UInt8], from connection: ConnectionID)
    /// The connection is gone, called once. `code` is the code the server closed with (4008,
    /// 1009, 1001, …), else the peer's close code, or nil if there was none. A close the server
    /// decided is reported at the next tick, while lws may still be delivering the close frame.
    func transport(_ server: WebSocketServer, didClose connection: ConnectionID, code: UInt16?, reason: String)
    /// Called every `tickInterval`.
    func transportTick(_ server: WebSocketServer)
    /// Answers an HTTP request other than /healthz and /readyz; nil gives a JSON 404.
    func transport(_ server: WebSocketServer, handle request: HTTPRequest) -> HTTPResponse?
}
