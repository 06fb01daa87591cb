/// One reply of Redis (RESP2), copied out of hiredis' reply object.
public enum RedisReply: Hashable, Sendable {
    /// A bulk string, as bytes.
    case string([UInt8])
    /// An integer reply.
    case integer(Int64)
    /// An array reply (a pub/sub message, `EXEC`'s results, …), its elements in order.
    case array([RedisReply])
    /// A nil reply (a missing key), or a reply of a type RESP2 does not have.
    case null
    /// A status reply, e.g. `OK` or `PONG`.
    case status(String)
    /// An error reply (`ERR …`, `WRONGTYPE …`, a script's `redis.error_reply`).
    case error(String)

    /// A bulk or status string as text.
    public var text: String? {
        switch self {
        case .string(let bytes): String(decoding: bytes, as: UTF8.self)
        case .status(let text): text
        default: nil
        }
    }

    /// The value of an integer reply; nil for any other.
    public var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The elements of an array reply; nil for any other.
    public var elements: [RedisReply]? {
        if case .array(let elements) = self { return elements }
        return nil
    }
}
