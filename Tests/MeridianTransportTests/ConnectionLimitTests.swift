import Foundation
import MeridianClientTransport
@testable import MeridianTransport
import Testing
import MeridianTesting

@Suite(.serialized) struct ConnectionLimitTests {
    @Test func overThePerIPLimitTheUpgradeIsAnswered429() throws {
        let (server, handler, port) = try startServer { $0.maxConnectionsPerIP = 2 }
        defer { server.stop() }
        let clients = (0..<2).map { _ in WebSocketClient(port: port) }
        for client in clients { try client.connect() }
        let third = try upgradeAnswer(port: port)
        #expect(third.status == 429)
        #expect(third.body.contains("too many connections"))

        clients[0].close()
        #expect(handler.wait { _, closed in closed.count == 1 })
        let again = WebSocketClient(port: port)
        try again.connect()
        again.close()
        clients[1].close()
    }

    @Test func overTheTotalLimitTheUpgradeIsAnswered503() throws {
        let (server, _, port) = try startServer { $0.maxConnections = 1 }
        defer { server.stop() }
        let first = WebSocketClient(port: port)
        try first.connect()
        defer { first.close() }
        let second = try upgradeAnswer(port: port)
        #expect(second.status == 503)
        #expect(second.body.contains("connection limit"))
        // Plain HTTP is not counted.
        #expect(try httpGet(port: port, path: "/healthz").status == 200)
    }

    /// Every way a connection ends gives its place back: client close, server close (1009),
    /// a peer that vanishes without a close frame, and refusals (never counted).
    @Test func placesComeBackOnEveryClosePath() throws {
        let handler = EchoHandler()
        handler.verdict = { $0.path == "/refuse" ? .refuse(status: 401, reason: "no") : .accept }
        let (server, _, port) = try startServer(handler: handler) {
            $0.maxConnections = 2
            $0.maxConnectionsPerIP = 2
            $0.maxMessageBytes = 1024
        }
        defer { server.stop() }
        var ended = 0
        for _ in 0..<10 {
            let polite = WebSocketClient(port: port)
            try polite.connect()
            polite.close()

            let tooBig = WebSocketClient(port: port)
            try tooBig.connect()
            tooBig.send(String(repeating: "x", count: 4096))
            #expect(try tooBig.receive() == .closed(code: 1009, reason: "message too big"))
            tooBig.close()

            // Upgraded, then the socket is closed without a close frame.
            #expect(try HTTPConnection(port: port).upgrade(subprotocol: "meridian.v1") == 101)

            #expect(try upgradeAnswer(port: port, path: "/refuse").status == 401)
            ended += 3
            let expected = ended
            #expect(handler.wait { _, closed in closed.count == expected })
        }
        let stats = onServiceThread(server) { server in server.stats }
        #expect(stats.admittedConnections == 0)
        #expect(stats.refusedHandshakes == 10)
        let clients = (0..<2).map { _ in WebSocketClient(port: port) }
        for client in clients { try client.connect() }
        for client in clients { client.close() }
    }

    @Test func admissionCounts() {
        var admissions = Admissions(maxTotal: 3, maxPerPeer: 2)
        admissions.admit("a")
        admissions.admit("a")
        #expect(admissions.check("a") == .peerFull)
        #expect(admissions.check("b") == nil)
        admissions.admit("b")
        #expect(admissions.check("c") == .serverFull)
        admissions.release("a")
        admissions.release("a")
        #expect(admissions.perPeer["a"] == nil)
        #expect(admissions.check("a") == nil)
        #expect(admissions.total == 1)
    }
}
