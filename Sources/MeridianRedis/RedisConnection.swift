internal import CHiredis
import Glibc

/// One connection to Redis, used by one thread at a time: blocking calls with a timeout,
/// pipelines, and (for a subscriber) reads of what has arrived. The bytes go over a
/// ``RedisStream`` (TCP, or TLS for `rediss://`); hiredis' reader makes replies of them.
///
/// After any I/O error or timeout the connection is broken: every later call throws
/// `.unreachable`, and the owner makes a new connection.
public final class RedisConnection {
    /// The server this connection is to; every error message names it.
    public let address: RedisAddress
    private let stream: RedisStream
    private let reader: UnsafeMutablePointer<redisReader>
    /// Commands appended and not written yet.
    private var output: [UInt8] = []
    private var input = [UInt8](repeating: 0, count: 16 * 1024)
    /// Why the connection broke, once it did.
    private var failure: String?

    /// Connects within `timeout`; calls then wait at most `timeout` for each read or write.
    public init(to address: RedisAddress, timeout: Duration) throws(RedisError) {
        self.address = address
        do throws(RedisError) {
            stream = try RedisStream(host: address.host, port: address.port, tls: address.tls, timeout: timeout)
        } catch {
            throw RedisError(error.kind, "\(address): \(error.message)")
        }
        guard let reader = redisReaderCreate() else { throw RedisError(.unreachable, "\(address): cannot allocate a reader") }
        self.reader = reader
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

    deinit { redisReaderFree(reader) }

    /// True once an I/O error, a timeout or a protocol error broke the connection.
    public var isBroken: Bool { failure != nil }

    /// The socket, for a subscriber that waits for it to be readable (after ``hasBufferedInput``).
    public var descriptor: Int32 { stream.descriptor }

    /// Input already received and not read yet (TLS decrypts a record at a time): a subscriber
    /// reads it before it waits for the socket again.
    public var hasBufferedInput: Bool { stream.hasBuffered }

    /// For a connection that expects nothing unasked (no reply pending, no subscription): true
    /// when its socket has something to read anyway, which can only be its end (Redis closed it:
    /// a restart, a timeout, a kill) or an error. Looks without waiting.
    public var hasEnded: Bool { isBroken || stream.hasEnded }

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
        try flush()
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        while replies.count < commands.count {
            if let reply = try nextReply() {
                replies.append(reply)
            } else {
                try receive()
            }
        }
        return replies
    }

    /// Queues `command` in the output buffer, without writing it.
    public func append(_ command: [[UInt8]]) throws(RedisError) {
        guard !isBroken else { throw broken() }
        // RESP: an array of bulk strings.
        header(UInt8(ascii: "*"), command.count)
        for argument in command {
            header(UInt8(ascii: "$"), argument.count)
            output.append(contentsOf: argument)
            output.append(13)
            output.append(10)
        }
    }

    /// `*N\r\n` or `$N\r\n` (a count's digits fit in a small string, which needs no allocation).
    private func header(_ kind: UInt8, _ count: Int) {
        output.append(kind)
        output.append(contentsOf: String(count).utf8)
        output.append(13)
        output.append(10)
    }

    /// Writes what ``append(_:)`` queued (blocking until the socket takes it).
    public func flush() throws(RedisError) {
        guard !isBroken else { throw broken() }
        guard !output.isEmpty else { return }
        let written = output.withUnsafeBytes { bytes in Result { () throws(RedisError) in try stream.write(bytes) } }
        if case .failure(let error) = written { throw fail(error.message) }
        output.removeAll(keepingCapacity: true)
    }

    /// Reads what the socket has (one read, which waits only if nothing has arrived) and
    /// returns every whole reply it completes: for a subscriber, after its socket polled readable.
    public func readAvailable() throws(RedisError) -> [RedisReply] {
        try receive()
        var replies: [RedisReply] = []
        while let reply = try nextReply() { replies.append(reply) }
        return replies
    }

    /// One read from the stream, handed to the reader.
    private func receive() throws(RedisError) {
        guard !isBroken else { throw broken() }
        let read = input.withUnsafeMutableBytes { buffer in Result { () throws(RedisError) in try stream.read(into: buffer) } }
        let count: Int
        switch read {
        case .success(let n): count = n
        case .failure(let error): throw fail(error.message)
        }
        let fed = input.withUnsafeBytes { redisReaderFeed(reader, $0.baseAddress?.assumingMemoryBound(to: CChar.self), count) }
        guard fed == mrd_redis_ok() else { throw fail(Self.readerError(reader)) }
    }

    /// The next whole reply the reader holds, if any.
    private func nextReply() throws(RedisError) -> RedisReply? {
        var raw: UnsafeMutableRawPointer?
        guard redisReaderGetReply(reader, &raw) == mrd_redis_ok() else { throw fail(Self.readerError(reader)) }
        return raw.map(Self.copy)
    }

    private func fail(_ reason: String) -> RedisError {
        if failure == nil { failure = reason }
        return broken()
    }

    private func broken() -> RedisError {
        RedisError(.unreachable, "\(address): \(failure ?? "no reply")")
    }

    private static func readerError(_ reader: UnsafeMutablePointer<redisReader>) -> String {
        withUnsafeBytes(of: reader.pointee.errstr) { bytes in
            let text = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            return text.isEmpty ? "protocol error" : "protocol error: \(text)"
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
}
