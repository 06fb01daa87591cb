import Foundation
import MeridianTransportCore
@testable import MeridianTransport
import Testing
import MeridianTesting

/// Requests lws does not parse as HTTP (a method it does not know, CONNECT) reach the handler
/// through the raw fallback, and /healthz and /readyz refuse methods they do not answer.
@Suite struct RawHTTPTests {
    /// Sends `bytes` on a new connection and reads until the server closes it (or 5 s pass).
    static func exchange(_ port: Int, _ bytes: String) throws -> (status: Int, headers: [String: String], body: String, closed: Bool) {
        let connection = try HTTPConnection(port: port)
        try connection.send(Array(bytes.utf8))
        let (answer, ended) = connection.answerUntilEnd()
        return (answer.status, Dictionary(answer.headers, uniquingKeysWith: { _, last in last }), answer.text, ended)
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
