import Foundation
import MeridianClient
import MeridianCore
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
