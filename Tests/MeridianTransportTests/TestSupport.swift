import Foundation
import MeridianTransport
import MeridianTransportCore
#if canImport(Glibc)
import Glibc
#endif

/// Echoes every message back to its sender and records opens and closes.
final class EchoHandler: TransportHandler, @unchecked Sendable {
    struct Close: Equatable {
        var connection: ConnectionID
        var code: UInt16?
        var reason: String
    }

    private let condition = NSCondition()
    private var _opened: [ConnectionID] = []
    private var _closed: [Close] = []
    private var _handshakes: [ConnectionID: Handshake] = [:]
    // `echo`, `verdict` and `onTick` are read on the service thread: set them before the server
    // starts, or on the service thread (`server.execute { handler.onTick = … }`).
    var echo = true
    /// Decides upgrades, on the service thread; nil accepts all (the protocol's default).
    var verdict: ((Handshake) -> HandshakeVerdict)?
    /// Runs on every tick, on the service thread.
    var onTick: ((ServerLoop) -> Void)?

    var opened: [ConnectionID] { condition.withLock { _opened } }
    var closed: [Close] { condition.withLock { _closed } }
    var handshakes: [ConnectionID: Handshake] { condition.withLock { _handshakes } }

    func transport(_ server: ServerLoop, shouldAccept handshake: Handshake) -> HandshakeVerdict {
        verdict?(handshake) ?? .accept
    }

    func transport(_ server: ServerLoop, didOpen connection: ConnectionID, handshake: Handshake) {
        condition.withLock {
            _opened.append(connection)
            _handshakes[connection] = handshake
            condition.broadcast()
        }
    }

    func transport(_ server: ServerLoop, didReceive message: UnsafeRawBufferPointer, from connection: ConnectionID) {
        if echo { server.send(OutboundFrame(text: Array(message)), to: connection) }
    }

    func transport(_ server: ServerLoop, didClose connection: ConnectionID, code: UInt16?, reason: String) {
        condition.withLock {
            _closed.append(Close(connection: connection, code: code, reason: reason))
            condition.broadcast()
        }
    }

    func transportTick(_ server: ServerLoop) { onTick?(server) }

    func transport(_ server: ServerLoop, handle request: HTTPRequest) -> HTTPResponse? {
        if request.path == "/echo" {
            return HTTPResponse(status: 200, contentType: "text/plain", body: Array("\(request.method) ".utf8) + request.body)
        }
        guard request.path == "/hello" else { return nil }
        return .json(200, #"{"hello":"\#(request.query)"}"#)
    }

    /// Waits (on a condition variable) until `predicate` holds for the recorded state.
    func wait(timeout: TimeInterval = 5, until predicate: (_ opened: [ConnectionID], _ closed: [Close]) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(_opened, _closed) {
            if !condition.wait(until: deadline) { return predicate(_opened, _closed) }
        }
        return true
    }
}

/// Starts a server on an ephemeral port.
func startServer(
    handler: EchoHandler = EchoHandler(), _ configure: (inout TransportConfiguration) -> Void = { _ in }
) throws -> (server: WebSocketServer, handler: EchoHandler, port: Int) {
    var configuration = TransportConfiguration()
    configuration.port = 0
    configure(&configuration)
    let server = WebSocketServer(configuration: configuration, handler: handler)
    let port = try server.start()
    return (server, handler, port)
}

/// Runs `body` on the server's service thread and waits for its result.
func onServiceThread<T: Sendable>(_ server: WebSocketServer, _ body: @escaping @Sendable (ServerLoop) -> T) -> T {
    let box = ResultBox<T>()
    server.execute { loop in box.set(body(loop)) }
    return box.get()
}

final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: T?

    func set(_ newValue: T) {
        condition.withLock {
            value = newValue
            condition.broadcast()
        }
    }

    /// The value, or nil if none was set within `timeout` seconds.
    func get(timeout: TimeInterval) -> T? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        return condition.withLock {
            while value == nil {
                if !condition.wait(until: deadline) { break }
            }
            return value
        }
    }

    func get() -> T {
        condition.withLock {
            while value == nil { condition.wait() }
            return value!
        }
    }
}

/// One HTTP/1.1 GET on a fresh connection; returns the status code and body.
func httpGet(port: Int, path: String) throws -> (status: Int, body: String) {
    try HTTPConnection(port: port).get(path)
}

/// A keep-alive HTTP/1.1 connection over a POSIX socket, for requests made during a drain.
final class HTTPConnection {
    private let fd: Int32
    private var buffered: [UInt8] = []

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TransportError.connectFailed("socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            Glibc.close(fd)
            throw TransportError.connectFailed("connect")
        }
    }

    deinit { Glibc.close(fd) }

    /// Sends a WebSocket upgrade request and returns the response status; the socket is then
    /// never read again, like a peer that hangs without answering the close handshake.
    func upgrade(subprotocol: String) throws -> Int {
        try get("/", headers: "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Protocol: \(subprotocol)\r\n", expectBody: false).status
    }

    /// Sends a GET and reads one response (headers plus Content-Length bytes of body).
    func get(_ path: String, headers: String = "", expectBody: Bool = true) throws -> (status: Int, body: String) {
        try request("GET", path, headers: headers, expectBody: expectBody)
    }

    /// Sends a request with `body` (and its Content-Length) and reads one response.
    func request(_ method: String, _ path: String, headers: String = "", body: [UInt8] = [], expectBody: Bool = true) throws -> (status: Int, body: String) {
        try send(method, path, headers: headers, body: body)
        return try response(expectBody: expectBody)
    }

    /// Sends a request without reading its answer.
    func send(_ method: String, _ path: String, headers: String = "", body: [UInt8] = []) throws {
        let contentLength = body.isEmpty ? "" : "Content-Length: \(body.count)\r\n"
        let request = Array("\(method) \(path) HTTP/1.1\r\nHost: x\r\n\(contentLength)\(headers)\r\n".utf8) + body
        guard Glibc.send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else {
            throw TransportError.connectFailed("send")
        }
    }

    /// Whether anything (an answer, or the end of the connection) can be read now.
    var readable: Bool {
        var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return !buffered.isEmpty || poll(&entry, 1, 0) > 0
    }

    /// Reads one response (headers plus Content-Length bytes of body).
    func response(expectBody: Bool = true) throws -> (status: Int, body: String) {
        let separator = Array("\r\n\r\n".utf8)
        var headerEnd: Int?
        while headerEnd == nil {
            headerEnd = buffered.indices.dropLast(3).first { Array(buffered[$0..<$0 + 4]) == separator }
            if headerEnd == nil { try fill() }
        }
        let head = String(decoding: buffered[..<headerEnd!], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        let status = Int(lines.first?.split(separator: " ").dropFirst().first ?? "") ?? 0
        let length = lines.dropFirst().compactMap { line -> Int? in
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
            return Int(parts[1].trimmingCharacters(in: .whitespaces))
        }.first ?? 0
        guard expectBody else {
            buffered.removeFirst(headerEnd! + 4)
            return (status, "")
        }
        let bodyStart = headerEnd! + 4
        while buffered.count < bodyStart + length { try fill() }
        let body = String(decoding: buffered[bodyStart..<bodyStart + length], as: UTF8.self)
        buffered.removeFirst(bodyStart + length)
        return (status, body)
    }

    /// Reads exactly `count` bytes (what an upgraded connection receives: frames).
    func read(_ count: Int) throws -> [UInt8] {
        while buffered.count < count { try fill() }
        defer { buffered.removeFirst(count) }
        return Array(buffered[..<count])
    }

    /// Reads until the peer ends the connection; returns what came before the end.
    func readToEnd() throws -> [UInt8] {
        while true {
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = recv(fd, &chunk, chunk.count, 0)
            if count > 0 { buffered.append(contentsOf: chunk[0..<count]); continue }
            guard count == 0 || errno == ECONNRESET else { throw TransportError.connectFailed("no end within the receive timeout") }
            defer { buffered.removeAll() }
            return buffered
        }
    }

    /// Sends `text` as one masked text frame (under 126 bytes).
    func sendText(_ text: String) throws {
        let payload = Array(text.utf8), mask: [UInt8] = [1, 2, 3, 4]
        precondition(payload.count < 126)
        let frame = [0x81, 0x80 | UInt8(payload.count)] + mask + payload.enumerated().map { $1 ^ mask[$0 & 3] }
        guard Glibc.send(fd, frame, frame.count, Int32(MSG_NOSIGNAL)) == frame.count else {
            throw TransportError.connectFailed("send")
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = recv(fd, &chunk, chunk.count, 0)
        guard count > 0 else { throw TransportError.connectFailed("connection closed") }
        buffered.append(contentsOf: chunk[0..<count])
    }
}

/// Sends a WebSocket upgrade request on a fresh connection and returns the answer's status
/// and body (101 and "" when accepted).
func upgradeAnswer(port: Int, path: String = "/", subprotocol: String = "meridian.v1", headers: String = "") throws -> (status: Int, body: String) {
    try HTTPConnection(port: port).get(path, headers: "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        + "Sec-WebSocket-Protocol: \(subprotocol)\r\n" + headers)
}
