import Foundation
import MeridianTransport
import Testing
import MeridianTesting

/// The server's keepalive (ServerLoop+Keepalive.swift): a connection quiet for the ping
/// interval gets a PING; one quiet for the idle timeout is dropped; anything the peer sends
/// keeps it alive. The peer here is a raw socket, which answers nothing unless told to.
@Suite struct KeepaliveTests {
    let quick: (inout TransportConfiguration) -> Void = {
        $0.pingInterval = .seconds(1)
        $0.idleTimeout = .seconds(2)
        $0.tickInterval = .milliseconds(5)
    }

    @Test func aQuietConnectionIsPingedThenDroppedWhenItNeverAnswers() throws {
        let handler = EchoHandler()
        let (server, _, port) = try startServer(handler: handler, quick)
        defer { server.stop() }
        let peer = try HTTPConnection(port: port)
        #expect(try peer.upgrade(subprotocol: "meridian.v1") == 101)
        let opened = ContinuousClock.now
        #expect(handler.wait { opened, _ in opened.count == 1 })
        // One PING, not before the ping interval.
        #expect(try peer.read(3) == [0x89, 0x01, UInt8(ascii: "k")])
        #expect(ContinuousClock.now - opened >= .milliseconds(950))
        // Never answered: dropped at the idle timeout, with no close frame and no second PING.
        #expect(try peer.readToEnd() == [])
        #expect(ContinuousClock.now - opened >= .milliseconds(1950))
        #expect(handler.wait { _, closed in closed.count == 1 })
        let stats = onServiceThread(server) { $0.stats }
        #expect(stats.keepalivePings == 1 && stats.idleCloses == 1)
    }

    /// A service thread that stalls past the idle timeout before the PING was due (a long pause,
    /// a stopped process, a clock jump) pings the quiet connection when it resumes, and drops it
    /// only when the PING has gone unanswered for idle timeout minus ping interval.
    @Test func aLoopStalledPastTheIdleTimeoutPingsBeforeItDrops() throws {
        let handler = EchoHandler()
        let (server, _, port) = try startServer(handler: handler, quick)
        defer { server.stop() }
        let peer = try HTTPConnection(port: port)
        #expect(try peer.upgrade(subprotocol: "meridian.v1") == 101)
        #expect(handler.wait { opened, _ in opened.count == 1 })
        // The fault under test: the service thread does nothing for 2.5 s, past the 2 s timeout.
        onServiceThread(server) { _ in Thread.sleep(forTimeInterval: 2.5) }
        let resumed = ContinuousClock.now
        #expect(try peer.read(3) == [0x89, 0x01, UInt8(ascii: "k")])
        #expect(try peer.readToEnd() == [])
        #expect(ContinuousClock.now - resumed >= .milliseconds(950))
        let stats = onServiceThread(server) { $0.stats }
        #expect(stats.keepalivePings == 1 && stats.idleCloses == 1)
    }

    @Test func messagesKeepAConnectionAliveWithoutPings() throws {
        let handler = EchoHandler()
        handler.echo = false
        let (server, _, port) = try startServer(handler: handler, quick)
        defer { server.stop() }
        let peer = try HTTPConnection(port: port)
        #expect(try peer.upgrade(subprotocol: "meridian.v1") == 101)
        #expect(handler.wait { opened, _ in opened.count == 1 })
        // A message every 300 ms for three idle timeouts: never pinged, never dropped.
        let until = ContinuousClock.now + .seconds(6)
        while ContinuousClock.now < until {
            try peer.sendText("here")
            Thread.sleep(forTimeInterval: 0.3)  // the peer's pace, not a wait for the server
            #expect(!peer.readable)
        }
        #expect(handler.closed.isEmpty)
        // Quiet from now on: pinged, then dropped.
        #expect(try peer.read(3) == [0x89, 0x01, UInt8(ascii: "k")])
        #expect(try peer.readToEnd() == [])
        let stats = onServiceThread(server) { $0.stats }
        #expect(stats.keepalivePings == 1 && stats.idleCloses == 1)
    }
}
