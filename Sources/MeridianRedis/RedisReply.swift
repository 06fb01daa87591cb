/// One reply of Redis (RESP2), copied out of hiredis' reply object.
public enum RedisReply: Hashable, Sendable {
    case string([UInt8])
    case integer(Int64)
    case array([RedisReply])
    case null
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

    public var integer: Int64? {
        if case .integer(let value) = self { return value }
        return nil
    }

    public var elements: [RedisReply]? {
        if case .array(let elements) = self { return elements }
        return nil
    }
}
