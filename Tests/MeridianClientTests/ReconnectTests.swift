import Foundation
import MeridianClient
import MeridianCore
import Testing

@Suite("Client reconnect and resume")
struct ReconnectTests {
    @Test func clientDroppedByTheServerResumesWithoutMissingAnEvent() async throws {
        let server = try LiveServer {
            $0.transport.queueHighWaterBytes = 64 << 10
            // Large enough for the replay after the resume; the grace period drops the paused client.
            $0.transport.queueHardLimitBytes = 256 << 20
            $0.transport.slowConsumerGrace = .milliseconds(300)
            $0.transport.closeTimeout = .seconds(120)
            $0.historySize = 100_000
        }
        defer { server.stop() }
        let writer = MeridianClient(port: server.port, configuration: ClientConfiguration(session: "s", name: "Writer"))
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
        firstTransport.socket.pauseReading()

        // Flood discrete events (about 4 KB each) until the server closes the paused client (4008);
        // loopback socket buffers may absorb tens of megabytes first.
        let pad = JSONValue.string(String(repeating: "m", count: 3_900))
        var sent = 0
        let droppedBySlowConsumer = { (updates: [ClientUpdate]) in
            updates.contains { if case .participantLeft(let id, "slow_consumer") = $0 { id == firstWelcome.participant } else { false } }
        }
        while !droppedBySlowConsumer(writerLog.updates) && sent < 40_000 {
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<50 {
                    let n = sent
                    sent += 1
                    group.addTask {
                        try await writer.send(.annotationUpdate(id: "pin", changes: ["metadata": .object(["pad": pad, "n": .number(Double(n))])]))
                    }
                }
                try await group.waitForAll()
            }
        }
        let dropped = droppedBySlowConsumer(writerLog.updates)
        #expect(dropped, "not dropped after \(sent) events")
        firstTransport.socket.resumeReading()

        // The client sees 4008, reconnects with resume and catches up.
        #expect(slowLog.wait(timeout: 60) { $0.contains(.didDisconnect(code: 4008)) })
        #expect(slowLog.wait(timeout: 30) { $0.contains { if case .didConnect(let w) = $0 { w.resumed } else { false } } })
        try await writer.send(.annotationAdd(point("after", 1, 1)))
        let last = try await writer.send(.ping).seq
        #expect(slowLog.wait(timeout: 30) { _ in (slow.state?.seq ?? 0) >= last })
        #expect(box.current !== firstTransport)

        // Every discrete event arrived exactly once, in order, across both connections.
        let all = slowLog.events.filter { !$0.isTransient }.map(\.seq)
        let contiguous = all == Array((firstWelcome.seq + 1)...last)
        #expect(contiguous, "discrete seqs \(all.first ?? 0)…\(all.last ?? 0): \(all.count) of \(last - firstWelcome.seq)")
        let converged = slow.state == writer.state
        #expect(converged, "mirrors differ")
    }
}
