import Foundation
import MeridianClientTransport
@testable import MeridianTransport
import MeridianTransportCore
import Testing
import MeridianTesting

@Suite(.serialized) struct WebSocketServerTests {
    @Test func roundTripsMessages() throws {
        let (server, _, port) = try startServer { $0.maxMessageBytes = 2 << 20 }
        defer { server.stop() }
        let client = WebSocketClient(port: port)
        try client.connect()
        defer { client.close() }

        client.send("hello")
        #expect(try client.receive() == .text("hello"))

        // Larger than one client part and one server write chunk: continuation frames in,
        // a 64-bit-length frame written alone out.
        let big = String(repeating: "0123456789abcdef", count: 1 << 16)
        client.send(big)
        #expect(try client.receive() == .text(big))
    }

    @Test func upgradeWithoutOrWithOtherSubprotocolIsRefused() throws {
        let (server, handler, port) = try startServer()
        defer { server.stop() }
        #expect(throws: TransportError.self) {
            try WebSocketClient(port: port, subprotocol: nil).connect()
        }
        #expect(throws: TransportError.self) {
            try WebSocketClient(port: port, subprotocol: "other.v1").connect()
        }
        #expect(handler.opened.isEmpty)
    }

    @Test func healthReadinessAndUnknownPaths() throws {
        let (server, _, port) = try startServer()
        defer { server.stop() }
        let health = try httpGet(port: port, path: "/healthz")
        #expect(health.status == 200)
        #expect(health.body == #"{"status":"ok"}"#)
        let ready = try httpGet(port: port, path: "/readyz")
        #expect(ready.status == 200)
        #expect(ready.body == #"{"status":"ready"}"#)
        let hello = try httpGet(port: port, path: "/hello?name=x")
        #expect(hello.status == 200)
        #expect(hello.body == #"{"hello":"name=x"}"#)
        let missing = try httpGet(port: port, path: "/nope")
        #expect(missing.status == 404)
        #expect(missing.body == #"{"error":"not_found","message":"no such path"}"#)
    }

    @Test func oversizedMessageClosesWith1009() throws {
        let (server, handler, port) = try startServer { $0.maxMessageBytes = 64 * 1024 }
        defer { server.stop() }
        let fits = WebSocketClient(port: port)
        try fits.connect()
        defer { fits.close() }
        let sixty = String(repeating: "x", count: 60 * 1024)
        fits.send(sixty)
        #expect(try fits.receive() == .text(sixty))

        let tooBig = WebSocketClient(port: port)
        try tooBig.connect()
        defer { tooBig.close() }
        tooBig.send(String(repeating: "y", count: 200 * 1024))
        let verdict = try tooBig.receive()
        #expect(verdict == .closed(code: 1009, reason: "message too big"), "\(verdict)")
        #expect(handler.wait { _, closed in closed.contains { $0.code == 1009 } })

        // The other connection is unaffected.
        fits.send("still here")
        #expect(try fits.receive() == .text("still here"))
    }

    @Test func broadcastArrivesCompleteAndInOrder() throws {
        let (server, handler, port) = try startServer()
        defer { server.stop() }
        let clients = (0..<5).map { _ in WebSocketClient(port: port) }
        for client in clients { try client.connect() }
        defer { for client in clients { client.close() } }
        #expect(handler.wait { opened, _ in opened.count == 5 })
        let ids = handler.opened

        let frameCount = 10_000
        server.execute { server in
            for index in 0..<frameCount {
                let frame = OutboundFrame(text: Array("{\"seq\":\(index)}".utf8))
                for id in ids { server.send(frame, to: id) }
            }
        }
        for client in clients {
            for index in 0..<frameCount {
                #expect(try client.receive() == .text("{\"seq\":\(index)}"))
            }
        }
    }

    @Test func slowConsumerIsClosedWith4008WhileOthersGetEverything() throws {
        let (server, handler, port) = try startServer {
            $0.queueHighWaterBytes = 64 * 1024
            $0.queueHardLimitBytes = 1 << 20
            $0.slowConsumerGrace = .milliseconds(300)
        }
        defer { server.stop() }
        let healthy = WebSocketClient(port: port)
        try healthy.connect()
        defer { healthy.close() }
        let slow = WebSocketClient(port: port)
        try slow.connect()
        defer { slow.close() }
        #expect(handler.wait { opened, _ in opened.count == 2 })
        let ids = handler.opened
        let (healthyID, slowID) = (ids[0], ids[1])
        slow.pauseReading()

        // Batches stay below the high-water mark so the healthy client never counts as behind.
        let payload = String(repeating: "p", count: 1000)
        var sent = 0
        var stats = TransportStats()
        // The last transient frame queued, superseded by the next batch's first. Frames belong to
        // the service thread: only the batches, which run there one after another, touch it.
        nonisolated(unsafe) var previous: OutboundFrame?
        for _ in 0..<4000 {
            let first = sent
            stats = onServiceThread(server) { server in
                for index in first..<(first + 32) {
                    let frame = OutboundFrame(text: Array("d\(index):\(payload)".utf8))
                    server.send(frame, to: healthyID)
                    server.send(frame, to: slowID)
                    let transient = OutboundFrame(text: Array("t\(index)".utf8))
                    server.broadcast(transient, to: [healthyID, slowID], superseding: previous)
                    previous = transient
                }
                return server.stats
            }
            sent += 32
            if stats.slowConsumerCloses > 0 { break }
        }
        #expect(stats.slowConsumerCloses == 1)
        #expect(stats.conflatedFrames > 0)

        slow.resumeReading()
        var last = try slow.receive(timeout: .seconds(10))
        while case .text = last { last = try slow.receive(timeout: .seconds(10)) }
        #expect(last == .closed(code: 4008, reason: "slow consumer"))
        #expect(handler.wait { _, closed in closed.contains { $0.connection == slowID && $0.code == 4008 } })

        server.execute { server in server.send(OutboundFrame(text: Array("end".utf8)), to: healthyID) }
        var expected = 0
        while true {
            guard case .text(let text) = try healthy.receive() else {
                Issue.record("healthy client closed")
                break
            }
            if text == "end" { break }
            if text.hasPrefix("t") { continue }
            #expect(text == "d\(expected):\(payload)")
            expected += 1
        }
        #expect(expected == sent)
    }

    /// Ten moves of one kind queued in one pass, each superseding the one before, then a
    /// discrete frame; what the client receives up to that frame.
    private func receivedAfterTenSupersedingMoves(conflateAbove: Int) throws -> (texts: [String], conflated: Int) {
        let (server, handler, port) = try startServer { $0.conflateAboveBytes = conflateAbove }
        defer { server.stop() }
        let client = WebSocketClient(port: port)
        try client.connect()
        defer { client.close() }
        #expect(handler.wait { opened, _ in opened.count == 1 })
        let id = handler.opened[0]
        server.execute { server in
            var previous: OutboundFrame?
            for index in 0..<10 {
                let move = OutboundFrame(text: Array("t\(index)".utf8))
                server.broadcast(move, to: [id], superseding: previous)
                previous = move
            }
            server.send(OutboundFrame(text: Array("end".utf8)), to: id)
        }
        var texts: [String] = []
        while case .text(let text) = try client.receive(), text != "end" { texts.append(text) }
        return (texts, onServiceThread(server) { server in server.stats.conflatedFrames })
    }

    @Test func aReceiverThatKeepsUpGetsEveryTransientFrame() throws {
        let (texts, conflated) = try receivedAfterTenSupersedingMoves(conflateAbove: 16 * 1024)
        #expect(texts == (0..<10).map { "t\($0)" })
        #expect(conflated == 0)
    }

    @Test func aReceiverBehindTheThresholdGetsTheNewestTransientFrame() throws {
        let (texts, conflated) = try receivedAfterTenSupersedingMoves(conflateAbove: 0)
        #expect(texts == ["t9"])
        #expect(conflated == 9)
    }

    @Test func connectionBehindLongerThanGraceIsClosed() throws {
        let (server, handler, port) = try startServer {
            $0.queueHighWaterBytes = 64 * 1024
            $0.queueHardLimitBytes = 1 << 30
            $0.slowConsumerGrace = .milliseconds(300)
        }
        defer { server.stop() }
        let slow = WebSocketClient(port: port)
        try slow.connect()
        defer { slow.close() }
        #expect(handler.wait { opened, _ in opened.count == 1 })
        let id = handler.opened[0]
        slow.pauseReading()

        // Fill socket buffers until the server's own queue grows well above the high-water mark.
        // Between batches (32 KiB) the server writes up to 256 KiB, so only a backed-up socket
        // lets the queue reach 512 KiB.
        let text = Array(String(repeating: "q", count: 16 * 1024).utf8)
        var queued = 0
        for _ in 0..<10_000 {
            queued = onServiceThread(server) { server in
                let frame = OutboundFrame(text: text)
                for _ in 0..<2 { server.send(frame, to: id) }
                return server.queuedBytes(of: id)
            }
            if queued > 512 * 1024 { break }
        }
        #expect(queued > 512 * 1024)
        // Keep it paused until a tick has decided to close it (after the grace period).
        let decided = ResultBox<Bool>()
        server.execute { server in
            handler.onTick = { server in
                if server.stats.slowConsumerCloses > 0 { decided.set(true) }
            }
        }
        #expect(decided.get(timeout: 10) == true)
        slow.resumeReading()
        var last = try slow.receive(timeout: .seconds(10))
        while case .text = last { last = try slow.receive(timeout: .seconds(10)) }
        #expect(last == .closed(code: 4008, reason: "slow consumer"))
        #expect(handler.wait { _, closed in closed.contains { $0.connection == id && $0.code == 4008 } })
        #expect(onServiceThread(server) { server in server.stats.slowConsumerCloses } == 1)
    }

    @Test func keepalivePingsDoNotCorruptPreFramedWrites() throws {
        let handler = EchoHandler()
        let (server, _, port) = try startServer(handler: handler) {
            $0.pingInterval = .seconds(1)
            $0.idleTimeout = .seconds(2)
            $0.tickInterval = .milliseconds(5)
        }
        defer { server.stop() }
        let client = WebSocketClient(port: port)
        try client.connect()
        defer { client.close() }
        #expect(handler.wait { opened, _ in opened.count == 1 })
        let id = handler.opened[0]
        // About 3 s of frames from the tick, spanning several PING/PONG exchanges, then "done".
        server.execute { server in
            let start = server.now
            var sequence = 0
            handler.onTick = { server in
                guard sequence >= 0 else { return }
                guard server.now - start < .seconds(3) else {
                    server.send(OutboundFrame(text: Array("done".utf8)), to: id)
                    sequence = -1
                    return
                }
                for _ in 0..<20 {
                    server.send(OutboundFrame(text: Array("n\(sequence)".utf8)), to: id)
                    sequence += 1
                }
            }
        }
        var expected = 0
        while case .text(let text) = try client.receive(), text != "done" {
            #expect(text == "n\(expected)")
            expected += 1
        }
        #expect(expected > 100)
        // Still open after more than idleTimeout: PONGs kept it valid.
        client.send("alive")
        #expect(try client.receive() == .text("alive"))
    }

    @Test func stopClosesClientsWith1001() throws {
        let (server, handler, port) = try startServer()
        let first = WebSocketClient(port: port)
        let second = WebSocketClient(port: port)
        try first.connect()
        try second.connect()
        #expect(handler.wait { opened, _ in opened.count == 2 })

        server.stop()
        #expect(try first.receive() == .closed(code: 1001, reason: "server shutting down"))
        #expect(try second.receive() == .closed(code: 1001, reason: "server shutting down"))
        #expect(handler.closed.count == 2)
        #expect(handler.closed.allSatisfy { $0.code == 1001 })
        server.stop()  // idempotent
        first.close()
        second.close()
        #expect(throws: TransportError.self) { try WebSocketClient(port: port).connect(timeout: .seconds(2)) }
    }

    @Test func readinessAnswers503WhileDraining() throws {
        let (server, handler, port) = try startServer { $0.shutdownGrace = .seconds(2) }
        // A peer that never answers the close handshake keeps the drain going for the grace period.
        let hanging = try HTTPConnection(port: port)
        #expect(try hanging.upgrade(subprotocol: "meridian.v1") == 101)
        #expect(handler.wait { opened, _ in opened.count == 1 })
        let http = try HTTPConnection(port: port)
        #expect(try http.get("/readyz").status == 200)

        server.execute { loop in loop.server.stop() }  // on the service thread: begins the drain, returns
        _ = onServiceThread(server) { _ in true }
        let draining = try http.get("/readyz")
        #expect(draining.status == 503)
        #expect(draining.body == #"{"status":"draining"}"#)
        #expect(throws: TransportError.self) { try WebSocketClient(port: port).connect(timeout: .seconds(2)) }
        let stopping = ContinuousClock.now
        server.stop()
        // Ends at the grace period, not at lws's own 5 s close timeout.
        #expect(ContinuousClock.now - stopping < .seconds(4))
        #expect(handler.closed.map(\.code) == [1001])
    }

    @Test func bindingATakenPortThrows() throws {
        let (server, _, port) = try startServer()
        defer { server.stop() }
        let second = WebSocketServer(
            configuration: TransportConfiguration(port: port), handler: EchoHandler())
        #expect(throws: TransportError.self) { try second.start() }
        second.stop()
    }
}

#if os(Linux)
@Suite struct BindAddressTests {
    /// Listening local addresses ("0100007F:1F90" style) for `port` in a /proc/net table.
    private func listeners(in table: String, port: Int) throws -> [String] {
        let text = try String(contentsOfFile: table, encoding: .utf8)
        let portHex = String(format: "%04X", port)
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count > 3, fields[3] == "0A", fields[1].hasSuffix(":" + portHex) else { return nil }
            return String(fields[1])
        }
    }

    @Test func ipv4LiteralBindsOnlyThatAddress() throws {
        let (server, _, port) = try startServer()
        defer { server.stop() }
        #expect(try listeners(in: "/proc/net/tcp", port: port) == [String(format: "0100007F:%04X", port)])
        #expect(try listeners(in: "/proc/net/tcp6", port: port).isEmpty)
    }
}
#endif
