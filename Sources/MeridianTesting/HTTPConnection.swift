import Foundation
import MeridianCore
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 connection to a server on 127.0.0.1 over a POSIX socket, for the tests: requests
/// go out as the test writes them (a method or a frame a client library would refuse to send, a
/// request sent now and answered later), and answers are read back as the server wrote them,
/// one at a time or up to the end of the connection.
public final class HTTPConnection {
    /// The socket could not be opened, the server could not be reached, or no answer came.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// One answer: its status, its headers (names in lower case) and its body.
    public struct Answer {
        /// The status code of the status line (0 when it has none).
        public var status: Int
        /// The header fields, names in lower case, in the order they came.
        public var headers: [(name: String, value: String)]
        /// The body: `Content-Length` bytes, or all that came before the end of the connection.
        public var bytes: [UInt8]

        /// The value of the first header field named `name` (any case).
        public func header(_ name: String) -> String? {
            headers.first { $0.name == name.lowercased() }?.value
        }

        /// The body as UTF-8 text.
        public var text: String { String(decoding: bytes, as: UTF8.self) }

        /// The body as JSON, nil when it is empty or not JSON.
        public var json: JSONValue? { bytes.isEmpty ? nil : JSONValue.parse(bytes) }
    }

    private let fd: Int32
    private var buffered: [UInt8] = []

    /// Connects to `port` on 127.0.0.1; a read waits up to `timeout` seconds (times `testSlowdown`).
    public init(port: Int, timeout: Int = 5) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var limit = timeval(tv_sec: timeout * testSlowdown, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(fd)
            throw Failure(description: "connect to port \(port)")
        }
    }

    deinit { Glibc.close(fd) }

    // MARK: Requests

    /// One request on a new connection, and its answer.
    public static func call(port: Int, _ method: String, _ path: String, json body: JSONValue? = nil, timeout: Int = 10) throws -> Answer {
        let connection = try HTTPConnection(port: port, timeout: timeout)
        try connection.send(method, path, body: body?.encoded ?? [])
        return try connection.answer()
    }

    /// Sends a request without reading its answer: `headers` (each line ending in CRLF) after
    /// `Host`, and `Content-Length` when there is a `body`.
    public func send(_ method: String, _ path: String, headers: String = "", body: [UInt8] = []) throws {
        let contentLength = body.isEmpty ? "" : "Content-Length: \(body.count)\r\n"
        try send(Array("\(method) \(path) HTTP/1.1\r\nHost: x\r\n\(contentLength)\(headers)\r\n".utf8) + body)
    }

    /// Sends `bytes` as they are.
    public func send(_ bytes: [UInt8]) throws {
        guard Glibc.send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else { throw Failure(description: "send") }
    }

    /// Sends a GET and reads one answer: its status and body as text.
    public func get(_ path: String, headers: String = "", expectBody: Bool = true) throws -> (status: Int, body: String) {
        try request("GET", path, headers: headers, expectBody: expectBody)
    }

    /// Sends a request with `body` and reads one answer: its status and body as text.
    public func request(
        _ method: String, _ path: String, headers: String = "", body: [UInt8] = [], expectBody: Bool = true
    ) throws -> (status: Int, body: String) {
        try send(method, path, headers: headers, body: body)
        let answer = try answer(expectBody: expectBody)
        return (answer.status, answer.text)
    }

    /// Sends a WebSocket upgrade request and returns the answer's status; the socket is then
    /// never read again, like a peer that hangs without answering the close handshake.
    public func upgrade(subprotocol: String) throws -> Int {
        try get("/", headers: "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Protocol: \(subprotocol)\r\n", expectBody: false).status
    }

    /// Sends `text` as one masked text frame (under 126 bytes).
    public func sendText(_ text: String) throws {
        let payload = Array(text.utf8), mask: [UInt8] = [1, 2, 3, 4]
        precondition(payload.count < 126)
        try send([0x81, 0x80 | UInt8(payload.count)] + mask + payload.enumerated().map { $1 ^ mask[$0 & 3] })
    }

    // MARK: Answers

    /// Whether anything (an answer, or the end of the connection) can be read now.
    public var readable: Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return !buffered.isEmpty || poll(&entry, 1, 0) > 0
    }

    /// Reads one answer: the head, then `Content-Length` bytes of body unless `expectBody` is false.
    public func answer(expectBody: Bool = true) throws -> Answer {
        let separator = Array("\r\n\r\n".utf8)
        var headEnd: Int?
        while headEnd == nil {
            headEnd = buffered.indices.dropLast(3).first { buffered[$0..<$0 + 4].elementsEqual(separator) }
            if headEnd == nil { try fill() }
        }
        var answer = Self.head(buffered[..<headEnd!])
        let bodyStart = headEnd! + 4
        let length = expectBody ? answer.header("content-length").flatMap { Int($0) } ?? 0 : 0
        while buffered.count < bodyStart + length { try fill() }
        answer.bytes = Array(buffered[bodyStart..<bodyStart + length])
        buffered.removeFirst(bodyStart + length)
        return answer
    }

    /// Reads one answer: its status and body as text.
    public func response(expectBody: Bool = true) throws -> (status: Int, body: String) {
        let answer = try answer(expectBody: expectBody)
        return (answer.status, answer.text)
    }

    /// Reads exactly `count` bytes (what an upgraded connection receives: frames).
    public func read(_ count: Int) throws -> [UInt8] {
        while buffered.count < count { try fill() }
        defer { buffered.removeFirst(count) }
        return Array(buffered[..<count])
    }

    /// Reads until the peer ends the connection, or the read timeout passes with nothing more:
    /// what came, and whether the connection ended (a reset counts as an end).
    public func readUntilEnd() -> (bytes: [UInt8], ended: Bool) {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &chunk, chunk.count, 0)
            if count > 0 { buffered.append(contentsOf: chunk[0..<count]); continue }
            defer { buffered.removeAll() }
            return (buffered, count == 0 || errno == ECONNRESET)
        }
    }

    /// Reads until the peer ends the connection; returns what came before the end.
    public func readToEnd() throws -> [UInt8] {
        let (bytes, ended) = readUntilEnd()
        guard ended else { throw Failure(description: "no end within the receive timeout") }
        return bytes
    }

    /// The whole of what came up to the end of the connection, as one answer (the body is all
    /// that followed the head), and whether the connection ended.
    public func answerUntilEnd() -> (answer: Answer, ended: Bool) {
        let (bytes, ended) = readUntilEnd()
        let separator = Array("\r\n\r\n".utf8)
        guard let headEnd = bytes.indices.dropLast(3).first(where: { bytes[$0..<$0 + 4].elementsEqual(separator) }) else {
            return (Self.head(bytes[...]), ended)
        }
        var answer = Self.head(bytes[..<headEnd])
        answer.bytes = Array(bytes[(headEnd + 4)...])
        return (answer, ended)
    }

    private static func head(_ bytes: ArraySlice<UInt8>) -> Answer {
        let lines = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n")
        let status = lines.first.flatMap { $0.split(separator: " ").dropFirst().first.flatMap { Int($0) } } ?? 0
        let headers = lines.dropFirst().compactMap { line -> (name: String, value: String)? in
            guard let colon = line.firstIndex(of: ":") else { return nil }
            return (line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        return Answer(status: status, headers: headers, bytes: [])
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 16_384)
        let count = recv(fd, &chunk, chunk.count, 0)
        guard count > 0 else { throw Failure(description: "the connection closed, or no answer within the receive timeout") }
        buffered.append(contentsOf: chunk[0..<count])
    }
}
