import Foundation
import MeridianClientTransport
import MeridianTransportCore
import MeridianSync
import MeridianTesting
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite("WebSocket clients without a server")
struct ClientLifecycleTests {
    @Test func aRefusedConnectionFailsAndTheClientIsOver() throws {
        let client = WebSocketClient(port: try SilentListener.closedPort())
        #expect(throws: TransportError.notConnected) { try client.receive(timeout: .milliseconds(10)) }
        do {
            try client.connect(timeout: .seconds(5))
            Issue.record("connected to a closed port")
        } catch let error as TransportError {
            #expect(error.isConnectFailure, "\(error)")
        }
        #expect(try client.receive(timeout: .milliseconds(10)) == .closed(code: nil, reason: ""))
        client.close()
        #expect(throws: TransportError.alreadyStarted) { try client.connect() }
    }

    @Test func aHandshakeThatNeverCompletesTimesOut() throws {
        let listener = try SilentListener()
        let client = WebSocketClient(port: listener.port)
        let start = ContinuousClock.now
        #expect(throws: TransportError.timeout) { try client.connect(timeout: .milliseconds(300)) }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(300) && elapsed < .seconds(3), "gave up after \(elapsed)")
        #expect(try client.receive(timeout: .milliseconds(10)) == .closed(code: nil, reason: ""))
        client.close()
    }
}

/// Counts a group's ticks; can stop the group from its own service thread.
final class TickCounter: ClientGroupHandler, Sendable {
    let ticks = Atomic<Int>(0)
    let stopAfter: Int?

    init(stopAfter: Int? = nil) { self.stopAfter = stopAfter }

    func group(_ group: ClientGroupLoop, didOpen id: Int) {}
    func group(_ group: ClientGroupLoop, didReceive message: UnsafeRawBufferPointer, from id: Int) {}
    func group(_ group: ClientGroupLoop, didClose id: Int, code: UInt16?, failed: Bool) {}

    func groupTick(_ group: ClientGroupLoop) {
        let count = ticks.add(1, ordering: .relaxed).newValue
        if let stopAfter, count == stopAfter { group.group.stop() }
    }
}

/// Records the ids of a group's connections that failed.
final class FailureRecorder: ClientGroupHandler, Sendable {
    let failed = Locked<[Int]>([])

    func group(_ group: ClientGroupLoop, didOpen id: Int) {}
    func group(_ group: ClientGroupLoop, didReceive message: UnsafeRawBufferPointer, from id: Int) {}
    func group(_ group: ClientGroupLoop, didClose id: Int, code: UInt16?, failed: Bool) {
        if failed { self.failed.withLock { $0.append(id) } }
    }
    func groupTick(_ group: ClientGroupLoop) {}
}

@Suite("WebSocket client groups without a server")
struct ClientGroupLifecycleTests {
    @Test func workFromOtherThreadsRunsBeforeStopReturns() throws {
        let handler = TickCounter()
        let group = WebSocketClientGroup(configuration: .init(port: try SilentListener.closedPort()), handler: handler)
        try group.start()
        let ran = Atomic<Int>(0)
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            for _ in 0..<100 { group.execute { _ in ran.add(1, ordering: .relaxed) } }
        }
        group.stop()
        #expect(ran.load(ordering: .relaxed) == 400)
        group.stop()
        group.execute { _ in ran.add(1, ordering: .relaxed) }
        #expect(ran.load(ordering: .relaxed) == 400, "work after the end is dropped")
        #expect(throws: TransportError.alreadyStarted) { try group.start() }
    }

    @Test func aConnectionToAClosedPortIsReportedAsFailed() throws {
        let handler = FailureRecorder()
        let group = WebSocketClientGroup(configuration: .init(port: try SilentListener.closedPort()), handler: handler)
        try group.start()
        defer { group.stop() }
        group.execute { loop in for id in 0..<3 { loop.connect(id) } }
        let deadline = ContinuousClock.now + .seconds(5)
        while handler.failed.withLock({ $0.count }) < 3 && ContinuousClock.now < deadline { usleep(1_000) }
        #expect(handler.failed.withLock { $0.sorted() } == [0, 1, 2])
    }

    @Test func stopFromTheServiceThreadEndsTheGroup() throws {
        let handler = TickCounter(stopAfter: 3)
        let group = WebSocketClientGroup(configuration: .init(port: try SilentListener.closedPort(), tickInterval: .milliseconds(1)), handler: handler)
        try group.start()
        let deadline = ContinuousClock.now + .seconds(5)
        while handler.ticks.load(ordering: .relaxed) < 3 && ContinuousClock.now < deadline { usleep(1_000) }
        group.stop()
        #expect(handler.ticks.load(ordering: .relaxed) == 3, "no tick after the loop was asked to end")
    }
}
