import Foundation
import MeridianClientTransport
@testable import MeridianTransport
import Testing
import MeridianTesting

/// Answers `/later` from another thread when the test says so, leaves `/never` unanswered,
/// echoes WebSocket messages, and answers anything else at once.
final class LaterHandler: TransportHandler, @unchecked Sendable {
    private let condition = NSCondition()
    private var waiting: [HTTPResponder] = []

    func transport(_ server: ServerLoop, didOpen connection: ConnectionID, handshake: Handshake) {}
    func transport(_ server: ServerLoop, didReceive message: UnsafeRawBufferPointer, from connection: ConnectionID) {
        server.send(OutboundFrame(text: Array(message)), to: connection)
    }
    func transport(_ server: ServerLoop, didClose connection: ConnectionID, code: UInt16?, reason: String) {}
    func transportTick(_ server: ServerLoop) {}

    func transport(_ server: ServerLoop, handle request: HTTPRequest, responder: HTTPResponder) {
        switch request.path {
        case "/later":
            condition.withLock {
                waiting.append(responder)
                condition.broadcast()
            }
        case "/never":
            break
        default:
            responder.respond(.json(200, #"{"now":true}"#))
        }
    }

    /// Waits until `count` requests wait for an answer.
    func waitForRequests(_ count: Int, timeout: TimeInterval = 5) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        return condition.withLock {
            while waiting.count < count {
                if !condition.wait(until: deadline) { return waiting.count >= count }
            }
            return true
        }
    }

    /// Answers every waiting request from a thread of its own, with `body`.
    func answerAll(_ body: String) {
        let responders = condition.withLock {
            defer { waiting.removeAll() }
            return waiting
        }
        let done = DispatchSemaphore(value: 0)
        Thread {
            for responder in responders {
                responder.respond(.json(200, body))
                responder.respond(.json(500, #"{"second":"ignored"}"#))
            }
            done.signal()
        }.start()
        done.wait()
    }
}

@Suite struct DeferredHTTPTests {
    @Test func anAnswerGivenLaterFromAnotherThreadArrivesWhileTheLoopServes() throws {
        let handler = LaterHandler()
        let (server, port) = try Self.start(handler)
        defer { server.stop() }

        let http = try HTTPConnection(port: port)
        try http.send("GET", "/later")
        #expect(handler.waitForRequests(1))
        // Unanswered, the request holds nothing up: WebSocket round trips and other HTTP requests go on.
        let client = WebSocketClient(port: port)
        try client.connect()
        defer { client.close() }
        for n in 0..<20 {
            client.send("ping \(n)")
            #expect(try client.receive() == .text("ping \(n)"))
        }
        #expect(try httpGet(port: port, path: "/now").status == 200)
        #expect(!http.readable)

        handler.answerAll(#"{"later":true}"#)
        let answer = try http.response()
        #expect(answer.status == 200)
        #expect(answer.body == #"{"later":true}"#)
        // Only the first answer counts, and the keep-alive connection serves the next request.
        #expect(try http.request("GET", "/now").body == #"{"now":true}"#)
    }

    @Test func aPostIsAnsweredLaterToo() throws {
        let handler = LaterHandler()
        let (server, port) = try Self.start(handler)
        defer { server.stop() }
        let http = try HTTPConnection(port: port)
        try http.send("POST", "/later", body: Array(#"{"x":1}"#.utf8))
        #expect(handler.waitForRequests(1))
        handler.answerAll(#"{"posted":true}"#)
        #expect(try http.response().body == #"{"posted":true}"#)
    }

    /// Two POSTs in one write (a client pipelining requests with bodies): the first is answered
    /// when its answer comes, the connection then ends, and the second goes again on a new one.
    /// libwebsockets 4.1.6 alone offered the buffered second request to the body-completion
    /// callback on every pass and, once it read it, never let it go: the service thread spun
    /// and answered no one else.
    @Test func pipelinedPostsGetTheFirstAnsweredThenTheConnectionEndsAndTheServerServesOthers() throws {
        let handler = LaterHandler()
        let (server, port) = try Self.start(handler)
        defer { server.stop() }
        let http = try HTTPConnection(port: port)
        let body = #"{"x":1}"#
        try http.send(Array((Self.rawPost("/later", body) + Self.rawPost("/later", body)).utf8))
        #expect(handler.waitForRequests(1))
        #expect(try httpGet(port: port, path: "/now").status == 200, "another client was not served while the first POST waited")
        handler.answerAll(#"{"posted":1}"#)
        let (answer, ended) = http.answerUntilEnd()
        #expect(answer.status == 200 && String(decoding: answer.bytes, as: UTF8.self) == #"{"posted":1}"#, "\(answer)")
        #expect(ended, "the connection stayed open with the second request unread")
        #expect(try httpGet(port: port, path: "/now").status == 200, "another client was not served after the answer")
        let again = try HTTPConnection(port: port)
        try again.send("POST", "/later", body: Array(body.utf8))
        #expect(handler.waitForRequests(1))
        handler.answerAll(#"{"posted":2}"#)
        #expect(try again.response().body == #"{"posted":2}"#)
    }

    /// A GET and a POST in one write: lws reads the POST from what it kept of the write once the
    /// GET is answered, and offers it again and again within one pass that never ends. The GET is
    /// answered, the connection ends, and the server goes on serving others.
    @Test func aPostPipelinedBehindAGetEndsItsConnectionAndTheServerServesOthers() throws {
        let handler = LaterHandler()
        let (server, port) = try Self.start(handler)
        defer { server.stop() }
        let http = try HTTPConnection(port: port)
        try http.send(Array(("GET /now HTTP/1.1\r\nHost: x\r\n\r\n" + Self.rawPost("/now", #"{"x":1}"#)).utf8))
        let (answer, ended) = http.answerUntilEnd()
        #expect(answer.status == 200, "\(answer)")
        #expect(ended, "the connection stayed open")
        #expect(try httpGet(port: port, path: "/now").status == 200, "another client was not served")
    }

    @Test func aRequestNobodyAnswersGets500() throws {
        let (server, port) = try Self.start(LaterHandler())
        defer { server.stop() }
        let answer = try httpGet(port: port, path: "/never")
        #expect(answer.status == 500)
        #expect(answer.body.contains("not answered"))
    }

    @Test func anAnswerToAClientThatLeftIsDroppedAndTheServerGoesOn() throws {
        let handler = LaterHandler()
        let (server, port) = try Self.start(handler)
        defer { server.stop() }
        do {
            let gone = try HTTPConnection(port: port)
            try gone.send("GET", "/later")
            #expect(handler.waitForRequests(1))
        }
        // The client has closed its socket (deinit). lws reads nothing from a connection whose
        // request is unanswered, so it learns of the close when the answer is written.
        handler.answerAll(#"{"late":true}"#)
        #expect(Self.eventually { onServiceThread(server) { server in server.httpExchanges.isEmpty } })
        #expect(try httpGet(port: port, path: "/now").body == #"{"now":true}"#)
    }

    @Test func aStopFinishesTheAnswersItWasWaitingFor() throws {
        let (handler, server, port, http) = try Self.startWaiting(grace: .seconds(30))
        let client = WebSocketClient(port: port)
        try client.connect()
        defer { client.close() }

        let stopped = DispatchSemaphore(value: 0)
        Thread {
            server.stop()
            stopped.signal()
        }.start()
        // The WebSocket's 1001 says the drain has begun; the request is still unanswered, and
        // the server waits for its answer instead of cutting it off.
        #expect(try client.receive() == .closed(code: 1001, reason: "server shutting down"))
        #expect(stopped.wait(timeout: .now()) == .timedOut)
        handler.answerAll(#"{"answered":"while draining"}"#)
        let answer = try http.response()
        #expect(answer.status == 200)
        #expect(answer.body == #"{"answered":"while draining"}"#)
        #expect(stopped.wait(timeout: .now() + 10) == .success)
    }

    @Test func aStopEndsAtItsGraceWhenAnAnswerNeverComes() throws {
        let (_, server, _, http) = try Self.startWaiting(grace: .milliseconds(200))
        let started = ContinuousClock.now
        server.stop()
        #expect(ContinuousClock.now - started >= .milliseconds(200))
        #expect(throws: (any Error).self) { try http.response() }
    }

    /// A server with shutdown grace `grace`, and a connection whose GET /later waits for its answer.
    static func startWaiting(grace: Duration) throws -> (LaterHandler, WebSocketServer, Int, HTTPConnection) {
        let handler = LaterHandler()
        let (server, port) = try start(handler, grace: grace)
        let http = try HTTPConnection(port: port)
        try http.send("GET", "/later")
        #expect(handler.waitForRequests(1))
        return (handler, server, port, http)
    }

    /// A POST of `body` to `path`, as the bytes a client writes (to put several in one write).
    static func rawPost(_ path: String, _ body: String) -> String {
        "POST \(path) HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
    }

    static func start(_ handler: LaterHandler, grace: Duration = .seconds(2)) throws -> (WebSocketServer, Int) {
        let server = WebSocketServer(configuration: TransportConfiguration(port: 0, shutdownGrace: grace), handler: handler)
        return (server, try server.start())
    }

    /// Polls `condition` every 10 ms for up to 5 s.
    static func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(5)
        while ContinuousClock.now < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return condition()
    }
}
