/// Why a Redis call failed. `message` names the server and the cause.
public struct RedisError: Error, Hashable, Sendable, CustomStringConvertible {
    public enum Kind: Hashable, Sendable {
        /// The server could not be reached, or the connection broke or timed out: the call may
        /// or may not have been carried out, and the connection is not used again.
        case unreachable
        /// Redis answered with an error reply.
        case replied
        /// A reply of a shape the caller did not expect.
        case unexpected
    }

    public let kind: Kind
    public let message: String

    public init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
