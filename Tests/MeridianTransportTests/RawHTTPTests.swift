import Foundation
import MeridianTransportCore
@testable import MeridianTransport
import Testing

/// Requests lws does not parse as HTTP (a method it does not know, CONNECT) reach the handler
/// through the raw fallback, and /healthz and /readyz refuse methods they do not answer.
@Suite struct RawHTTPTests {
    /// Sends `bytes` on a new connection and reads until the server closes it (or 5 s pass).
    static func exchange(_ port: Int, _ bytes: String) throws -> (status: Int, headers: [String: String], body: String, closed: Bool) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw TransportError.connectFailed("connect") }
        let request = Array(bytes.utf8)
        _ = send(fd, request, request.count, Int32(MSG_NOSIGNAL))
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var closed = false
        while true {
            let n = recv(fd, &chunk, chunk.count, 0)
            if n == 0 { closed = true }
            if n <= 0 { break }
            received += chunk[..<n]
        }
        let text = String(decoding: received, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        let lines = parts[0].components(separatedBy: "\r\n")
        let status = lines.first.flatMap { $0.split(separator: " ").dropFirst().first.flatMap { Int($0) } } ?? 0
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return (status, headers, parts.dropFirst().joined(separator: "\r\n\r\n"), closed)
    }

    static func start(_ handler: LaterHandler, _ configure: (inout TransportConfiguration) -> Void = { _ in }) throws -> (WebSocketServer, Int) {
        var configuration = TransportConfiguration(port: 0)
        configure(&configuration)
        let server = WebSocketServer(configuration: configuration, handler: handler)
        return (server, try server.start())
    }

    @Test(arguments: ["TRACE", "QUERY", "PROPFIND", "CONNECT"])
    func aMethodLWSDoesNotParseReachesTheHandlerAndTheConnectionCloses(_ method: String) throws {
        let (server, port) = try Self.start(LaterHandler())
        defer { server.stop() }
        let answer = try Self.exchange(port, "\(method) /now?x=1 HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(answer.status == 200)
        #expect(answer.body == #"{"now":true}"#)
        #expect(answer.headers["content-length"] == "12")
        #expect(answer.closed)
        #expect(DeferredHTTPTests.eventually { onServiceThread(server) { $0.httpExchanges.isEmpty } })
    }

    @Test func aRawRequestMayBeAnsweredLater() throws {
        let handler = LaterHandler()
        let (server, port) = try Self.start(handler)
        defer { server.stop() }
        let answered = ResultBox<Int>()
        Thread { answered.set((try? Self.exchange(port, "TRACE /later HTTP/1.1\r\n\r\n").status) ?? 0) }.start()
        #expect(handler.waitForRequests(1))
        handler.answerAll(#"{"later":true}"#)
        #expect(answered.get(timeout: 5) == 200)
    }

    @Test func whatIsNoRequestLineIs400() throws {
        let (server, port) = try Self.start(LaterHandler())
        defer { server.stop() }
        let answer = try Self.exchange(port, "XYZZY\r\n\r\n")
        #expect(answer.status == 400)
        #expect(answer.body.contains("bad_request"))
        #expect(answer.closed)
    }

    /// A TLS hello on the plain port is answered at once, not held until the timeout.
    @Test func bytesThatCannotStartARequestAreRefusedAtOnce() throws {
        let (server, port) = try Self.start(LaterHandler()) { $0.handshakeTimeout = .seconds(5) }
        defer { server.stop() }
        let started = ContinuousClock.now
        let answer = try Self.exchange(port, "\u{16}\u{3}\u{1}\u{2}")
        #expect(answer.status == 400)
        #expect(answer.closed)
        #expect(ContinuousClock.now - started < .seconds(2))
    }

    @Test func aRequestLineThatNeverEndsIsClosedAfterTheHandshakeTimeout() throws {
        let (server, port) = try Self.start(LaterHandler()) { $0.handshakeTimeout = .seconds(1) }
        defer { server.stop() }
        let started = ContinuousClock.now
        let answer = try Self.exchange(port, "TRACE /slow")
        #expect(answer.status == 0)
        #expect(answer.closed)
        #expect(ContinuousClock.now - started < .seconds(4))
    }

    /// lws ends the target at a decoded CR and skips the rest of the request line.
    @Test func aRequestLineCutShortByAControlCharacterIs400() throws {
        let (server, port) = try Self.start(LaterHandler())
        defer { server.stop() }
        let answer = try Self.exchange(port, "GET /now%0D/more HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(answer.status == 400)
        #expect(answer.body.contains("bad_request"))
        #expect(answer.closed)
    }

    @Test(arguments: [("POST", "/healthz"), ("DELETE", "/readyz"), ("TRACE", "/healthz"), ("PUT", "/readyz")])
    func healthPathsAnswerGETAndHEADOnly(_ method: String, _ path: String) throws {
        let (server, port) = try Self.start(LaterHandler())
        defer { server.stop() }
        let answer = try Self.exchange(port, "\(method) \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
        #expect(answer.status == 405)
        #expect(answer.headers["allow"] == "GET, HEAD")
        #expect(answer.body == #"{"error":"method_not_allowed","message":"\#(method) \#(path): use GET or HEAD"}"#)
        #expect(try httpGet(port: port, path: path).status == 200)
    }
}
