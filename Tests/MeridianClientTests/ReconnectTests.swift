import Foundation
import MeridianClient
import MeridianCore
import MeridianProtocol
import MeridianTesting
import Testing

@Suite("Client reconnect and resume")
struct ReconnectTests {
    @Test(arguments: [1, 4]) func clientDroppedByTheServerResumesWithoutMissingAnEvent(threads: Int) async throws {
        // A client that stops reading cannot answer keepalive pings: the server drops it.
        let server = try TestServer.overWire {
            $0.threads = threads
            $0.transport.pingInterval = .seconds(1)
            $0.transport.idleTimeout = .seconds(2)
        }
        defer { server.stop() }
        let writer = MeridianClient(over: server, configuration: ClientConfiguration(session: "s", name: "Writer"))
        let writerLog = Recorder()
        writer.delegate = writerLog
        let box = TransportBox(port: server.port)
        let reconnect = ReconnectPolicy(initialDelay: .milliseconds(20), maxDelay: .milliseconds(200))
        let slow = MeridianClient(
            configuration: ClientConfiguration(session: "s", name: "Slow", role: .viewer, reconnect: reconnect),
            transport: { box.make() })
        let slowLog = Recorder()
        slow.delegate = slowLog
        defer { writer.close(); slow.close() }
        try writer.connect()
        let firstWelcome = try slow.connect()
        try await writer.send(.annotationAdd(point("pin", 0, 0)))
        let firstTransport = try #require(box.current)
        firstTransport.pauseReading()

        // Events while the slow client is still connected but not reading…
        for i in 0..<20 {
            try await writer.send(.annotationUpdate(id: "pin", changes: ["subtitle": .string("before \(i)")]))
        }
        let dropped = writerLog.wait(timeout: 30) { updates in
            updates.contains { if case .participantLeft(let id, _) = $0 { id == firstWelcome.participant } else { false } }
        }
        #expect(dropped, "the server did not drop the silent client")
        // …and after the server dropped it.
        for i in 0..<20 {
            try await writer.send(.annotationAdd(point("after-\(i)", 1, Double(i))))
        }
        firstTransport.resumeReading()

        // The client notices, reconnects with resume and catches up.
        #expect(slowLog.wait(timeout: 30) { $0.contains { if case .didDisconnect = $0 { true } else { false } } })
        #expect(slowLog.wait(timeout: 30) { $0.contains { if case .didConnect(let w) = $0 { w.resumed } else { false } } })
        let last = try await writer.send(.ping).seq
        // A resumed welcome carries the seq of the client's own join, whose event comes after the
        // missed ones: the events applied, not the state's seq, say when all have come.
        #expect(slowLog.waitForEvents(timeout: 30) { $0.contains { !$0.isTransient && $0.seq >= last } })
        #expect(box.current !== firstTransport)

        // Every discrete event up to `last` arrived exactly once, in order, across both connections.
        let all = slowLog.events.filter { !$0.isTransient && $0.seq <= last }.map(\.seq)
        let contiguous = all == Array((firstWelcome.seq + 1)...last)
        #expect(contiguous, "discrete seqs \(all.first ?? 0)…\(all.last ?? 0): \(all.count) of \(last - firstWelcome.seq)")
        let converged = slow.state == writer.state
        #expect(converged, "mirrors differ")
        #expect(slow.state?.annotations.count == 21)
    }
}

/// A real connection to the test server whose end the test decides: ``end(with:)`` makes the
/// client read a close with that code (what the server sends after it), then the connection goes.
final class EndableTransport: ClientTransport, @unchecked Sendable {
    let inner: any ClientTransport
    private let lock = NSLock()
    private var ending: UInt16??
    let token: String?
    init(port: Int, token: String?) {
        inner = Wire.transport(port: port)
        self.token = token
    }
    func connect(timeout: Duration) throws { try inner.connect(timeout: timeout) }
    func send(_ text: String) { inner.send(text) }
    func receive(timeout: Duration) throws -> TransportMessage {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let code = lock.withLock({ ending }) { return .closed(code: code) }
            let message: TransportMessage
            do { message = try inner.receive(timeout: min(.milliseconds(50), deadline - .now)) } catch where ContinuousClock.now < deadline { continue }
            // Ended meanwhile: the inner connection's own end (no code) is the test's.
            if let code = lock.withLock({ ending }) { return .closed(code: code) }
            return message
        }
    }
    func close() { inner.close() }
    func end(with code: UInt16?) {
        lock.withLock { ending = .some(code) }
        inner.close()
    }
}

/// The Swift client after each close code the server sends (SPEC §10, ``CloseCode/table``):
/// it reconnects and resumes after the codes that say so (4012 at once), asks for a new token
/// after 4401, and otherwise stays closed, saying why.
@Suite("Client after each close code")
struct CloseCodeTests {
    /// The transports a client made (each a real connection the test can end), and how often
    /// it asked for a new token.
    final class Made: @unchecked Sendable {
        let lock = NSLock()
        var transports: [EndableTransport] = []
        var renewals = 0
        var first: EndableTransport { lock.withLock { transports[0] } }
        var count: Int { lock.withLock { transports.count } }
    }

    /// A client of `server` whose connections are ``EndableTransport``s, joined, with its log.
    static func joinedClient(_ server: TestServer, _ made: Made, renewToken: (@Sendable () -> String?)? = nil) throws -> (MeridianClient, Recorder) {
        let configuration = ClientConfiguration(
            session: "codes", name: "Coder", reconnect: ReconnectPolicy(initialDelay: .milliseconds(20), maxDelay: .milliseconds(50)),
            renewToken: renewToken)
        let client = MeridianClient(configuration: configuration, authorizedTransport: { token in
            let t = EndableTransport(port: server.port, token: token)
            made.lock.withLock { made.transports.append(t) }
            return t
        })
        let log = Recorder()
        client.delegate = log
        try client.connect()
        return (client, log)
    }

    @Test(arguments: CloseCode.table.map(\.code) + [nil])
    func theClientFollowsTheAdviceOfTheCode(code: UInt16?) async throws {
        let server = try TestServer.overWire()
        defer { server.stop() }
        let made = Made()
        let advice = CloseCode.advice(after: code)
        let (client, log) = try Self.joinedClient(server, made) { made.lock.withLock { made.renewals += 1; return "renewed" } }
        defer { client.close() }
        try #require(made.count == 1)
        made.first.end(with: code)

        #expect(log.wait { $0.contains(.didDisconnect(code: code)) })
        if advice.reconnects || advice == .renewToken {
            #expect(log.wait { $0.contains { if case .didConnect(let w) = $0 { w.resumed } else { false } } }, "resumed after \(String(describing: code))")
            #expect(!log.updates.contains(.didClose))
            let tokens = made.lock.withLock { made.transports.map(\.token) }
            #expect(tokens.last ?? nil == (advice == .renewToken ? "renewed" : nil), "the token of the last join")
            #expect(made.lock.withLock { made.renewals } == (advice == .renewToken ? 1 : 0))
        } else {
            let code = try #require(code)
            #expect(log.wait { $0.contains(.didClose) }, "stays closed after \(code)")
            #expect(log.updates.contains(.didStop(code: code, advice: advice)))
            #expect(made.count == 1, "no reconnect after \(code)")
        }
    }

    /// Without a token callback a 4401 leaves the client closed, saying a new token is needed.
    @Test func anExpiredTokenWithoutACallbackStaysClosed() async throws {
        let server = try TestServer.overWire()
        defer { server.stop() }
        let made = Made()
        let (client, log) = try Self.joinedClient(server, made)
        defer { client.close() }
        made.first.end(with: CloseCode.tokenExpired)
        #expect(log.wait { $0.contains(.didClose) })
        #expect(log.updates.contains(.didStop(code: CloseCode.tokenExpired, advice: .renewToken)))
        #expect(made.count == 1)
    }
}
