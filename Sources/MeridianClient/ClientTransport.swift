/// What a transport hands the client: one whole text message, or the end of the connection.
public enum TransportMessage: Sendable, Equatable {
    case text(String)
    /// The connection is closed: the close code of the server's close frame (nil if none, e.g. 1006).
    case closed(code: UInt16?)
}

/// One WebSocket connection speaking `meridian.v1`, as the client needs it. The Linux
/// implementation is ``LWSClientTransport``; an Apple platform one can wrap
/// `URLSessionWebSocketTask` without touching the rest of the client.
///
/// The client calls `receive` from one reader thread and `send`/`close` from any thread.
public protocol ClientTransport: AnyObject, Sendable {
    /// Opens the connection (with subprotocol `meridian.v1`); throws when it fails or times out.
    func connect(timeout: Duration) throws
    /// Queues one text message.
    func send(_ text: String)
    /// Blocks until a message arrives; throws on timeout. After the end returns `.closed`.
    func receive(timeout: Duration) throws -> TransportMessage
    /// Closes the connection (idempotent).
    func close()
}
