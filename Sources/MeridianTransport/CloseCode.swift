/// WebSocket close codes Meridian uses, with what a client should do
/// (documented in `Protocol/SPEC.md`): the one table for the transport and the server.
public enum CloseCode {
    /// Normal closure.
    public static let normal: UInt16 = 1000
    /// The server is shutting down: reconnect with backoff and resume.
    public static let goingAway: UInt16 = 1001
    /// A frame RFC 6455 does not allow (a 1-byte close payload, a close code a client may not
    /// send): fix the client.
    public static let protocolError: UInt16 = 1002
    /// A binary frame: fix the client; do not retry unchanged.
    public static let unsupportedData: UInt16 = 1003
    /// Invalid UTF-8 in a text frame: fix the client.
    public static let invalidPayload: UInt16 = 1007
    /// A message over the size limit: fix the client.
    public static let messageTooBig: UInt16 = 1009
    /// The server failed: reconnect with backoff and resume.
    public static let internalError: UInt16 = 1011
    /// The client did not keep up with its events: reconnect and resume.
    public static let slowConsumer: UInt16 = 4008
    /// Too many invalid requests: give up; fix the client.
    public static let abusive: UInt16 = 4009
    /// The same participant joined from a newer connection: do not reconnect
    /// automatically (the other connection is the live one).
    public static let replaced: UInt16 = 4010
    /// The session moved to another node of a cluster (its owner died or gave it up, or the
    /// link between nodes broke): reconnect at once, to any node, and resume.
    public static let sessionMoved: UInt16 = 4012
    /// The bearer token expired without a `token.refresh`: get a new token,
    /// reconnect and resume.
    public static let tokenExpired: UInt16 = 4401
}
