import Foundation
import MeridianClientTransport
@testable import MeridianTransport
import MeridianTransportCore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The server's fairness between connections (ServerLoop+Input.swift) over real sockets, with
/// small slices and allowances so that every mechanism is used: what is asserted is behaviour
/// (every message handled once, in order, answered; what a closing peer sent handled before its
/// close; the mechanisms engaged), never timing.
@Suite(.serialized) struct InputFairnessTests {
    /// Records every message and close, in the order the handler saw them, and answers each
    /// message with its own text, except "fan:N": N frames broadcast to every open connection.
    final class Recorder: TransportHandler, @unchecked Sendable {
        enum Event: Equatable {
            case message(ConnectionID, String)
            case closed(ConnectionID)
        }

        private let condition = NSCondition()
        private var _events: [Event] = []
        private var _opened: [ConnectionID] = []
        /// A message that makes the handler close its connection with 4000 (read on the service thread).
        var closeOn: String?
        private var _afterFan: (() -> Void)?
        /// Run on the service thread after each fan-out is queued.
        var afterFan: (() -> Void)? {
            get { condition.withLock { _afterFan } }
            set { condition.withLock { _afterFan = newValue } }
        }

        var events: [Event] { condition.withLock { _events } }

        func transport(_ server: ServerLoop, didOpen connection: ConnectionID, handshake: Handshake) {
            condition.withLock {
                _opened.append(connection)
                condition.broadcast()
            }
        }

        func transport(_ server: ServerLoop, didReceive message: UnsafeRawBufferPointer, from connection: ConnectionID) {
            let text = String(decoding: message, as: UTF8.self)
            condition.withLock {
                _events.append(.message(connection, text))
                condition.broadcast()
            }
            if text.hasPrefix("fan:"), let count = Int(text.dropFirst(4)) {
                let members = condition.withLock { _opened }
                for k in 0..<count { server.broadcast(OutboundFrame(text: Array("b\(k)".utf8)), to: members) }
                afterFan?()
            } else if text == closeOn {
                server.close(connection, code: 4000, reason: "asked to")
            } else {
                server.send(OutboundFrame(text: Array(message)), to: connection)
            }
        }

        func transport(_ server: ServerLoop, didClose connection: ConnectionID, code: UInt16?, reason: String) {
            condition.withLock {
                _events.append(.closed(connection))
                condition.broadcast()
            }
        }

        func transportTick(_ server: ServerLoop) {}

        func waitOpened(_ count: Int, timeout: TimeInterval = 20) -> Bool {
            let deadline = Date(timeIntervalSinceNow: timeout)
            condition.lock()
            defer { condition.unlock() }
            while _opened.count < count {
                if !condition.wait(until: deadline) { return _opened.count >= count }
            }
            return true
        }

        func wait(timeout: TimeInterval = 20, until predicate: ([Event]) -> Bool) -> Bool {
            let deadline = Date(timeIntervalSinceNow: timeout)
            condition.lock()
            defer { condition.unlock() }
            while !predicate(_events) {
                if !condition.wait(until: deadline) { return predicate(_events) }
            }
            return true
        }
    }

    private func start(_ recorder: Recorder, _ configure: (inout TransportConfiguration) -> Void) throws -> (WebSocketServer, Int) {
        var configuration = TransportConfiguration()
        configuration.port = 0
        configure(&configuration)
        let server = WebSocketServer(configuration: configuration, handler: recorder)
        return (server, try server.start())
    }

    @Test func floodersAreReadInTurnsAndEveryMessageIsHandledInOrderAndAnswered() throws {
        let recorder = Recorder()
        let (server, port) = try start(recorder) {
            $0.inputSlice = .microseconds(20)
            $0.inputQuantum = 2
            $0.sparseRate = 10
            $0.sparseBurst = 5
            $0.busyReadsPerPass = 2
            $0.writesPerPass = 3
            $0.busyWritesPerPass = 3
        }
        defer { server.stop() }
        let perFlooder = 400
        let flooders = try (0..<8).map { _ in try RawWebSocket(port: port) }
        // Each sends its whole flood at once, in one write: far beyond its sparse credit.
        for (i, flooder) in flooders.enumerated() {
            try flooder.send((0..<perFlooder).map { "f\(i):\($0)" })
        }
        // Meanwhile a quiet client, one request at a time, each answered.
        let quiet = WebSocketClient(port: port)
        try quiet.connect()
        defer { quiet.close() }
        for k in 0..<10 {
            quiet.send("q\(k)")
            #expect(try quiet.receive() == .text("q\(k)"))
        }
        for (i, flooder) in flooders.enumerated() {
            let answers = try flooder.receiveTexts(count: perFlooder)
            #expect(answers == (0..<perFlooder).map { "f\(i):\($0)" }, "flooder \(i): every message answered once, in order")
        }
        // The handler saw each connection's messages in the order they were sent.
        var byConnection: [ConnectionID: [String]] = [:]
        for case .message(let connection, let text) in recorder.events { byConnection[connection, default: []].append(text) }
        let floods = byConnection.values.filter { $0.first?.hasPrefix("f") == true }.sorted { $0[0] < $1[0] }
        #expect(floods.count == 8)
        for flood in floods {
            let i = flood[0].split(separator: ":")[0]
            #expect(flood == (0..<perFlooder).map { "\(i):\($0)" })
        }
        let stats = onServiceThread(server) { $0.stats }
        #expect(stats.messagesWaited > 0, "messages waited for their turn")
        #expect(stats.inputThrottles > 0, "busy connections were read in turns")
        // (Whether writes also had to wait for their turn depends on how far behind the loop got:
        // not asserted, it is not the same under ThreadSanitizer.)
        #expect(stats.messagesWaiting == 0)
    }

    /// `fan:frames` from the first of 30 quiet members, in one callback: every member gets the
    /// frames once, in order. The server's stats after.
    private func fanOut(frames: Int, _ configure: (inout TransportConfiguration) -> Void) throws -> TransportStats {
        let recorder = Recorder()
        let (server, port) = try start(recorder, configure)
        defer { server.stop() }
        let members = try (0..<30).map { _ in try RawWebSocket(port: port) }
        #expect(recorder.waitOpened(30))
        try members[0].send(["fan:\(frames)"])
        for (i, member) in members.enumerated() {
            #expect(try member.receiveTexts(count: frames) == (0..<frames).map { "b\($0)" }, "member \(i)")
        }
        return onServiceThread(server) { $0.stats }
    }

    @Test func aBroadcastToMoreMembersThanAPassWritesReachesEveryOneInOrder() throws {
        // 2 of the 30 may be written at once, the others wait for later passes, and gather the
        // frames queued meanwhile (end-of-pass writes off).
        let stats = try fanOut(frames: 40) {
            $0.writesPerPass = 2
            $0.busyWritesPerPass = 1
            $0.directWritesPerPass = 0
        }
        #expect(stats.deferredWrites >= 28, "writes past the pass's allowance waited for their turn")
        #expect(stats.deliveries == 40 * 30)
    }

    @Test func aBroadcastOnALightLoopWritesEveryIdleMemberAtTheEndOfThePass() throws {
        // The first of the 40 broadcasts finds all 30 members idle: each is written once, at the
        // end of the pass, with all 40 frames; none waits for WRITEABLE or for its turn.
        let stats = try fanOut(frames: 40) { $0.writesPerPass = 2 }
        #expect(stats.directWrites == 30)
        #expect(stats.deferredWrites == 0)
        #expect(stats.deliveries == 40 * 30)
    }

    @Test func aFanOutOnAQuietLoopIsWrittenInOnePassWhateverItsSlice() throws {
        // The slice is spent after the first writes, but no input waits: nothing to make way for.
        let stats = try fanOut(frames: 1) { $0.writeSlice = .zero }
        #expect(stats.writeSlicesSpent == 0)
        #expect(stats.directWrites == 30)
        #expect(stats.deliveries == 30)
    }

    @Test func aFanOutMakesWayForInputThatArrivesWhileItIsWritten() throws {
        // A message from a 31st connection is in the server's socket before the fan-out's writes
        // begin (sent over loopback from the handler, on the service thread). The slice is spent
        // after the first writes: the pass stops, the next reads and answers the message, and the
        // members left are written after. Every member still gets its frame once.
        let recorder = Recorder()
        let (server, port) = try start(recorder) { $0.writeSlice = .zero }
        defer { server.stop() }
        let members = try (0..<30).map { _ in try RawWebSocket(port: port) }
        #expect(recorder.waitOpened(30))
        let asker = try RawWebSocket(port: port)
        #expect(recorder.waitOpened(31))
        recorder.afterFan = { try? asker.send(["question"]) }
        try members[0].send(["fan:1"])
        #expect(try asker.receiveTexts(count: 2).sorted() == ["b0", "question"])
        for (i, member) in members.enumerated() {
            #expect(try member.receiveTexts(count: 1) == ["b0"], "member \(i)")
        }
        let stats = onServiceThread(server) { $0.stats }
        #expect(stats.writeSlicesSpent >= 1, "the writes made way for the waiting message")
        #expect(stats.deliveries == 31 + 1)
        // The asker's socket closes now, not after the stop's grace.
        recorder.afterFan = nil
    }

    @Test func aLoadedLoopWritesBroadcastsFromWriteableOnlyWhenTurnsAreNotWrittenAtPassEnd() throws {
        // No rate is light (LoadGaugeTests has the rule), and writes whose turn came wait for
        // WRITEABLE: none is made at the end of a pass.
        let stats = try fanOut(frames: 5) {
            $0.directWritesBelowRate = 0
            $0.turnWritesAtPassEnd = false
        }
        #expect(stats.directWrites == 0)
        #expect(stats.deliveries == 5 * 30)
    }

    @Test func aLoadedLoopWritesTheMembersWhoseTurnCameAtTheEndOfThePass() throws {
        // No rate is light; 4 writes a pass: the members are written 4 at a time, each at the
        // end of the pass its turn came in (no WRITEABLE), the others waiting their turn and
        // gathering frames. Every member gets every frame, in order.
        let stats = try fanOut(frames: 40) {
            $0.directWritesBelowRate = 0
            $0.writesPerPass = 4
        }
        #expect(stats.deferredWrites >= 26, "writes past the pass's allowance waited for their turn")
        #expect(stats.directWrites >= 30, "every member was written at the end of a pass")
        #expect(stats.deliveries == 40 * 30)
    }

    @Test func aConnectionFloodIsAcceptedAShareAPassAtATimeAndEveryOneServed() throws {
        let recorder = Recorder()
        let (server, port) = try start(recorder) { $0.acceptsPerPass = 2 }
        defer { server.stop() }
        // Forty connections at once: made while the service thread is held, so that all of
        // them wait on the listener together (the kernel completes their handshakes), then
        // each upgraded and answered.
        let sockets = try whileHeld(server) { try (0..<40).map { _ in try RawWebSocket(port: port, upgrade: false) } }
        for socket in sockets { try socket.upgrade() }
        try expectEachAnswers(sockets)
        let stats = onServiceThread(server) { $0.stats }
        #expect(stats.pausedAccepts > 0, "the listener paused")
        #expect(stats.openConnections == 40)
    }

    @Test func aBurstOfHandshakesIsServedAShareAPassAtATime() throws {
        let recorder = Recorder()
        let (server, port) = try start(recorder) {
            $0.handshakesPerPass = 4
            $0.acceptsPerPass = 64
        }
        defer { server.stop() }
        // Forty connections and their requests, all made while the service thread is held: they
        // are accepted in one pass, and every request is there to read in the next.
        let sockets = try whileHeld(server) {
            let sockets = try (0..<40).map { _ in try RawWebSocket(port: port, upgrade: false) }
            for socket in sockets { try socket.sendUpgradeRequest() }
            return sockets
        }
        for socket in sockets { try socket.readUpgradeAnswer() }
        try expectEachAnswers(sockets)
        let stats = onServiceThread(server) { $0.stats }
        #expect(stats.heldHandshakes == 40)
        #expect(stats.mostUpgradesInAPass <= 4, "\(stats.mostUpgradesInAPass) upgrades in one pass")
        #expect(stats.openConnections == 40)
    }

    /// `body`'s result, made while the service thread waits: what it sends is there together
    /// when the thread goes on.
    private func whileHeld<T>(_ server: WebSocketServer, _ body: () throws -> T) throws -> T {
        let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        server.execute { _ in
            held.signal()
            release.wait()
        }
        held.wait()
        defer { release.signal() }
        return try body()
    }

    /// Each socket sends a message and gets it back.
    private func expectEachAnswers(_ sockets: [RawWebSocket]) throws {
        for (i, socket) in sockets.enumerated() { try socket.send(["c\(i)"]) }
        for (i, socket) in sockets.enumerated() { #expect(try socket.receiveTexts(count: 1) == ["c\(i)"]) }
    }

    @Test func whatAPeerSentBeforeClosingIsHandledBeforeItsClose() throws {
        let recorder = Recorder()
        // Every pass queues after its first message: the rest wait in the inbox.
        let (server, port) = try start(recorder) { $0.inputSlice = .zero }
        defer { server.stop() }
        let client = try RawWebSocket(port: port)
        try client.send((0..<50).map { "m\($0)" }, thenClose: true)
        #expect(recorder.wait { $0.contains { if case .closed = $0 { true } else { false } } })
        let events = recorder.events
        #expect(Array(events.dropLast()) == (0..<50).map { .message(events[0].connection, "m\($0)") })
        #expect(events.last == .closed(events[0].connection))
    }

    @Test func aConnectionTheServerClosesHasTheRestOfItsInputDropped() throws {
        let recorder = Recorder()
        recorder.closeOn = "m10"
        let (server, port) = try start(recorder) { $0.inputSlice = .zero }
        defer { server.stop() }
        let client = try RawWebSocket(port: port)
        try client.send((0..<50).map { "m\($0)" })
        #expect(recorder.wait { $0.contains { if case .closed = $0 { true } else { false } } })
        let texts = recorder.events.compactMap { if case .message(_, let text) = $0 { text } else { nil } }
        #expect(texts == (0...10).map { "m\($0)" })
        #expect(client.closeCode() == 4000)
    }
}

extension InputFairnessTests.Recorder.Event {
    var connection: ConnectionID {
        switch self {
        case .message(let id, _), .closed(let id): id
        }
    }
}

/// A WebSocket client on a plain socket: sends many masked text frames in one write, reads the
/// server's frames.
final class RawWebSocket {
    private let fd: Int32
    private var buffer: [UInt8] = []

    /// Connects, and completes the upgrade unless told not to (``upgrade()`` then does);
    /// `receiveBuffer` bytes, when given, bound its socket's receive buffer.
    init(port: Int, upgrade: Bool = true, receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if var bytes = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, socklen_t(MemoryLayout<Int32>.size))
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, connected == 0 else { throw TransportError.connectFailed("connect") }
        if upgrade { try self.upgrade() }
    }

    func upgrade() throws {
        try sendUpgradeRequest()
        try readUpgradeAnswer()
    }

    func sendUpgradeRequest() throws {
        try write(Array(("GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
            + "Sec-WebSocket-Protocol: meridian.v1\r\n\r\n").utf8))
    }

    func readUpgradeAnswer() throws {
        let end = Array("\r\n\r\n".utf8)
        while true {
            if let at = buffer.indices.dropLast(3).first(where: { Array(buffer[$0..<$0 + 4]) == end }) {
                let head = String(decoding: buffer[..<at], as: UTF8.self)
                guard head.hasPrefix("HTTP/1.1 101") else { throw TransportError.connectFailed(head) }
                buffer.removeFirst(at + 4)
                return
            }
            try fill()
        }
    }

    deinit { Glibc.close(fd) }

    /// Sends `texts` as masked text frames in one write, then a close frame (1000) if asked.
    func send(_ texts: [String], thenClose: Bool = false) throws {
        let mask: [UInt8] = [0x12, 0x34, 0x56, 0x78]
        var bytes: [UInt8] = []
        func frame(_ opcode: UInt8, _ payload: [UInt8]) {
            bytes.append(0x80 | opcode)
            if payload.count < 126 {
                bytes.append(0x80 | UInt8(payload.count))
            } else {
                bytes += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
            }
            bytes += mask
            bytes += payload.enumerated().map { $0.element ^ mask[$0.offset & 3] }
        }
        for text in texts { frame(0x1, Array(text.utf8)) }
        if thenClose { frame(0x8, [0x03, 0xE8]) }
        try write(bytes)
    }

    /// The next `count` text messages from the server.
    func receiveTexts(count: Int) throws -> [String] {
        var texts: [String] = []
        while texts.count < count {
            guard let (opcode, payload) = try nextFrame() else { break }
            if opcode == 0x1 { texts.append(String(decoding: payload, as: UTF8.self)) }
        }
        return texts
    }

    /// The code of the server's close frame (nil if the connection ended without one).
    func closeCode() -> UInt16? {
        while let (opcode, payload) = try? nextFrame() {
            if opcode == 0x8 { return payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil }
        }
        return nil
    }

    private func nextFrame() throws -> (UInt8, [UInt8])? {
        func need(_ n: Int) throws -> Bool {
            while buffer.count < n {
                guard (try? fill()) != nil else { return false }
            }
            return true
        }
        guard try need(2) else { return nil }
        var length = Int(buffer[1] & 0x7F)
        var header = 2
        if length == 126 {
            guard try need(4) else { return nil }
            length = Int(buffer[2]) << 8 | Int(buffer[3])
            header = 4
        } else if length == 127 {
            guard try need(10) else { return nil }
            length = buffer[2..<10].reduce(0) { $0 << 8 | Int($1) }
            header = 10
        }
        guard try need(header + length) else { return nil }
        let opcode = buffer[0] & 0x0F
        let payload = Array(buffer[header..<header + length])
        buffer.removeFirst(header + length)
        return (opcode, payload)
    }

    private func write(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw TransportError.connectFailed("send") }
            sent += n
        }
    }

    private func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65536)
        let n = recv(fd, &chunk, chunk.count, 0)
        guard n > 0 else { throw TransportError.connectFailed("closed") }
        buffer += chunk[..<n]
    }
}
