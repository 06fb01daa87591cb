import MeridianSync

/// Request and reply with Redis from any thread, over one connection that calls take in turn
/// (each holds it for one round trip, bounded by `timeout`). A connection that breaks is
/// dropped, so a Redis restart costs the call in flight and the next call connects again.
/// Meant for control traffic (leases, registrations); messages go through ``RedisPublisher``.
public final class RedisClient: Sendable {
    /// The Redis server the client calls.
    public let address: RedisAddress
    /// Longest wait to connect, and for each read or write of a call.
    public let timeout: Duration
    private let connection = Locked<RedisConnection?>(nil)

    /// A client for `address`; it connects on its first call, and waits at most `timeout` for each
    /// connect, read or write.
    public init(address: RedisAddress, timeout: Duration = .seconds(2)) {
        self.address = address
        self.timeout = timeout
    }

    /// Sends `command` and waits for its reply (an error reply is returned, not thrown).
    public func call(_ command: [String]) throws(RedisError) -> RedisReply {
        try pipeline([command.map { Array($0.utf8) }])[0]
    }

    /// Sends the commands at once and returns their replies, in order.
    public func pipeline(_ commands: [[[UInt8]]]) throws(RedisError) -> [RedisReply] {
        try connection.withLock { (connection: inout RedisConnection?) throws(RedisError) -> [RedisReply] in
            let open: RedisConnection
            if let connection, !connection.isBroken {
                open = connection
            } else {
                connection = nil
                open = try RedisConnection(to: address, timeout: timeout)
                connection = open
            }
            return try open.pipeline(commands)
        }
    }

    /// Runs a Lua script (`EVAL`) with `keys` and `arguments`.
    public func eval(_ script: String, keys: [String], arguments: [String]) throws(RedisError) -> RedisReply {
        try call(["EVAL", script, String(keys.count)] + keys + arguments)
    }

    /// Closes the connection (the next call makes a new one).
    public func close() { connection.withLock { $0 = nil } }
}
