/// What a transport hands the client: one whole text message, or the end of the connection.
public enum TransportMessage: Sendable, Equatable {
    /// One whole text message from the server.
    case text(String)
    /// The connection is closed: the close code of the server's close frame (nil if none, e.g. 1006).
    case closed(code: UInt16?)
}

/// One WebSocket connection speaking `meridian.v1`, as the client needs it:
/// ``NIOClientTransport`` on every platform, ``LWSClientTransport`` on Linux.
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

/// Which transport a client made from a URL uses.
public enum TransportChoice: Sendable, Equatable {
    /// libwebsockets for `ws://` where it is built in (Linux); else, and for every `wss://`, the
    /// portable transport. libwebsockets 4.1 keeps OpenSSL's per-connection index in one
    /// library-wide variable that each new TLS context replaces, and its client makes a context
    /// per connection: TLS connections opened concurrently in one process could lose theirs.
    case automatic
    /// ``NIOClientTransport``, on every platform.
    case portable
    #if canImport(MeridianClientTransport)
    /// ``LWSClientTransport``; over `wss://`, for one connection at a time in a process.
    case libwebsockets
    #endif
}
