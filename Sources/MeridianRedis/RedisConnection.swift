internal import CHiredis
import Glibc

/// One connection to Redis through hiredis, used by one thread at a time: blocking calls with
/// a timeout, pipelines, and (for a subscriber) reads of what has arrived.
///
/// After any I/O error or timeout the connection is broken (hiredis keeps its error): every
/// later call throws `.unreachable`, and the owner makes a new connection.
public final class RedisConnection {
    public let address: RedisAddress
    private let context: UnsafeMutablePointer<redisContext>

    /// Connects within `timeout`; calls then wait at most `timeout` for each read or write.
    public init(to address: RedisAddress, timeout: Duration) throws(RedisError) {
        self.address = address
        let tv = Self.timeval(timeout)
        guard let context = redisConnectWithTimeout(address.host, Int32(address.port), tv) else {
            throw RedisError(.unreachable, "\(address): cannot allocate a connection")
        }
        if context.pointee.err != 0 {
            let reason = Self.reason(context)
            redisFree(context)
            throw RedisError(.unreachable, "\(address): \(reason)")
        }
        _ = redisSetTimeout(context, tv)
        _ = redisEnableKeepAlive(context)
        self.context = context
        try logIn()
    }

    /// `AUTH` and `SELECT` as the address asks, before anything else is sent.
    private func logIn() throws(RedisError) {
        var commands: [[String]] = []
        if let password = address.password { commands.append(["AUTH"] + (address.user.map { [$0] } ?? []) + [password]) }
        if address.database != 0 { commands.append(["SELECT", String(address.database)]) }
        guard !commands.isEmpty else { return }
        let replies = try pipeline(commands.map { $0.map { Array($0.utf8) } })
        for (command, reply) in zip(commands, replies) {
            if case .error(let text) = reply {
                // A refused login is the server's answer, not a broken connection: say which.
                throw RedisError(.replied, "\(address): \(command[0]) refused: \(text)")
            }
        }
    }

    deinit { redisFree(context) }

    /// True once an I/O error, a timeout or a protocol error broke the connection.
    public var isBroken: Bool { context.pointee.err != 0 }

    /// The socket, for a subscriber that waits for it to be readable.
    public var descriptor: Int32 { context.pointee.fd }

    /// For a connection that expects nothing unasked (no reply pending, no subscription): true
    /// when its socket has something to read anyway, which can only be its end (Redis closed it:
    /// a restart, a timeout, a kill) or an error. Looks without waiting.
    public var hasEnded: Bool {
        guard !isBroken else { return true }
        var fd = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
        return poll(&fd, 1, 0) != 0
    }

    /// Sends `command` (its first element the command's name) and waits for its reply.
    /// An error reply is returned as `.error`, not thrown.
    public func call(_ command: [String]) throws(RedisError) -> RedisReply {
        try pipeline([command.map { Array($0.utf8) }])[0]
    }

    /// Sends `command` and waits for its reply; byte arguments (a payload) as they are.
    public func call(bytes command: [[UInt8]]) throws(RedisError) -> RedisReply {
        try pipeline([command])[0]
    }

    /// Sends every command at once, then reads their replies, in order.
    public func pipeline(_ commands: [[[UInt8]]]) throws(RedisError) -> [RedisReply] {
        for command in commands { try append(command) }
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for _ in commands {
            var raw: UnsafeMutableRawPointer?
            guard redisGetReply(context, &raw) == mrd_redis_ok(), let raw else { throw broken() }
            replies.append(Self.copy(raw))
        }
        return replies
    }

    /// Queues `command` in the output buffer, without writing it.
    public func append(_ command: [[UInt8]]) throws(RedisError) {
        guard !isBroken else { throw broken() }
        var joined: [UInt8] = []
        joined.reserveCapacity(command.reduce(0) { $0 + $1.count })
        for argument in command { joined.append(contentsOf: argument) }
        let status = joined.withUnsafeBufferPointer { all -> Int32 in
            var pointers: [UnsafePointer<CChar>?] = []
            var lengths: [Int] = []
            var offset = 0
            let base = all.baseAddress.map { UnsafeRawPointer($0).assumingMemoryBound(to: CChar.self) }
            for argument in command {
                // A zero-length argument still needs a valid pointer.
                pointers.append(base.map { $0 + offset } ?? UnsafePointer(bitPattern: 1))
                lengths.append(argument.count)
                offset += argument.count
            }
            return redisAppendCommandArgv(context, Int32(command.count), &pointers, &lengths)
        }
        guard status == mrd_redis_ok() else { throw broken() }
    }

    /// Writes what ``append(_:)`` queued (blocking until the socket takes it).
    public func flush() throws(RedisError) {
        var done: Int32 = 0
        while done == 0 {
            guard redisBufferWrite(context, &done) == mrd_redis_ok() else { throw broken() }
        }
    }

    /// Reads what the socket has (one read, which waits only if nothing has arrived) and
    /// returns every whole reply it completes: for a subscriber, after its socket polled readable.
    public func readAvailable() throws(RedisError) -> [RedisReply] {
        guard redisBufferRead(context) == mrd_redis_ok() else { throw broken() }
        var replies: [RedisReply] = []
        while true {
            var raw: UnsafeMutableRawPointer?
            guard redisGetReplyFromReader(context, &raw) == mrd_redis_ok() else { throw broken() }
            guard let raw else { return replies }
            replies.append(Self.copy(raw))
        }
    }

    private func broken() -> RedisError {
        RedisError(.unreachable, "\(address): \(isBroken ? Self.reason(context) : "no reply")")
    }

    private static func reason(_ context: UnsafeMutablePointer<redisContext>) -> String {
        withUnsafeBytes(of: context.pointee.errstr) { bytes in
            let text = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            return text.isEmpty ? "connection error \(context.pointee.err)" : text
        }
    }

    /// Copies hiredis' reply and frees it.
    private static func copy(_ raw: UnsafeMutableRawPointer) -> RedisReply {
        defer { freeReplyObject(raw) }
        return convert(raw.assumingMemoryBound(to: redisReply.self))
    }

    private static func convert(_ reply: UnsafeMutablePointer<redisReply>) -> RedisReply {
        let r = reply.pointee
        let type = r.type
        func bytes() -> [UInt8] {
            guard let str = r.str, r.len > 0 else { return [] }
            return Array(UnsafeRawBufferPointer(start: str, count: Int(r.len)))
        }
        switch type {
        case mrd_redis_reply_string(): return .string(bytes())
        case mrd_redis_reply_integer(): return .integer(r.integer)
        case mrd_redis_reply_nil(): return .null
        case mrd_redis_reply_status(): return .status(String(decoding: bytes(), as: UTF8.self))
        case mrd_redis_reply_error(): return .error(String(decoding: bytes(), as: UTF8.self))
        case mrd_redis_reply_array():
            guard let element = r.element else { return .array([]) }
            return .array((0..<Int(r.elements)).compactMap { element[$0].map(convert) })
        default: return .null
        }
    }

    private static func timeval(_ duration: Duration) -> Glibc.timeval {
        let (seconds, attoseconds) = duration.components
        return Glibc.timeval(tv_sec: Int(seconds), tv_usec: Int(attoseconds / 1_000_000_000_000))
    }
}
