/// WebSocket close codes Meridian uses, each with what a client should do after it (SPEC §10):
/// the one table for the server, its transport and the clients (the Swift client follows
/// ``advice(after:)``; meridian.js carries the same table, checked against this one by a test).
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

    /// What a client does once the server closed its connection (SPEC §10, "Client should").
    public enum Advice: String, Hashable, Sendable, CaseIterable {
        /// Reconnect with backoff and resume (also after a close without a code: 1006).
        case reconnect
        /// Reconnect at once, to any node, and resume.
        case reconnectNow = "reconnect-now"
        /// Get a new token, then reconnect and resume; without one, stay closed.
        case renewToken = "renew-token"
        /// Stay closed: the newer connection of the same participant is the live one.
        case stayReplaced = "replaced"
        /// Stay closed: the client's own frames broke the protocol; reconnecting would repeat it.
        case fixClient = "fix-client"
        /// Stay closed: too many invalid requests.
        case giveUp = "give-up"

        /// Whether the client reconnects by itself.
        public var reconnects: Bool { self == .reconnect || self == .reconnectNow }
    }

    /// Every code the server sends, with its advice, in SPEC §10's order.
    public static let table: [(code: UInt16, advice: Advice)] = [
        (normal, .reconnect), (goingAway, .reconnect), (protocolError, .fixClient), (unsupportedData, .fixClient),
        (invalidPayload, .fixClient), (messageTooBig, .fixClient), (internalError, .reconnect), (slowConsumer, .reconnect),
        (abusive, .giveUp), (replaced, .stayReplaced), (sessionMoved, .reconnectNow), (tokenExpired, .renewToken),
    ]

    /// What to do after a close with `code` (nil: the connection ended without a close frame,
    /// 1006). A code not in the table is treated as a network failure: reconnect with backoff.
    public static func advice(after code: UInt16?) -> Advice {
        guard let code else { return .reconnect }
        return table.first { $0.code == code }?.advice ?? .reconnect
    }
}
