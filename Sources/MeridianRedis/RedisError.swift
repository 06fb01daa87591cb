/// Why a Redis call failed. `message` names the server and the cause.
public struct RedisError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The class of failure: the server out of reach, an error reply, or a reply of the wrong shape.
    public enum Kind: Hashable, Sendable {
        /// The server could not be reached, or the connection broke or timed out: the call may
        /// or may not have been carried out, and the connection is not used again.
        case unreachable
        /// Redis answered with an error reply.
        case replied
        /// A reply of a shape the caller did not expect.
        case unexpected
    }

    /// The class of failure; after `.unreachable` the call may or may not have been carried out.
    public let kind: Kind
    /// What failed and why, naming the server (or the address that did not parse).
    public let message: String

    /// A failure of `kind`, described by `message`.
    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The ``message``.
    public var description: String { message }
}
