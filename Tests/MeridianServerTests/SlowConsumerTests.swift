import MeridianCore
import MeridianTesting
import Testing

@Suite("Slow consumers")
struct SlowConsumerTests {
    @Test func slowReaderIsClosedWhileOthersGetEveryEvent() throws {
        let server = try TestServer {
            // A healthy reader is at most one batch (about 600 KB) behind; the
            // slow one, which never reads, passes these once its socket is full.
            $0.transport.queueHighWaterBytes = 1 << 20
            $0.transport.queueHardLimitBytes = 4 << 20
            $0.transport.slowConsumerGrace = .seconds(1)
            // The reader parses megabytes before it sees the slow one leave.
            $0.transport.closeTimeout = .seconds(120)
            // The writer floods on purpose; this test is about the reader.
            $0.rateLimit = .unlimited
        }
        defer { server.stop() }
        let writer = try server.joined("s", name: "Writer")
        let reader = try server.joined("s", name: "Reader", role: "viewer")
        let slow = try server.joined("s", name: "Slow", role: "viewer")
        slow.socket.pauseReading()
        var lastSeq = try #require(reader.next("participant.joined").message["seq"]?.number)

        // Flood discrete events (about 3 KB each) until the server gives up on
        // the slow reader; the kernel's socket buffers absorb the first few MB.
        try writer.request("annotation.add", ["annotation": .point("pin", 0, 0)])
        let pad = JSONValue.string(String(repeating: "m", count: 3_000))
        var sent = 0
        var slowLeft = false
        while !slowLeft && sent < 15_000 {
            for _ in 0..<200 {
                writer.send(.object([
                    "type": .string("annotation.update"), "ref": .string("flood-\(sent)"), "id": .string("pin"),
                    "changes": .object(["metadata": .object(["pad": pad, "n": .number(Double(sent))])]),
                ]))
                sent += 1
            }
            // The ping's ack carries the seq after everything sent so far:
            // the reader must receive every discrete event up to it, in order.
            let target = try #require(writer.request("ping")["seq"]?.number)
            while lastSeq < target {
                let m = try reader.next()
                guard let seq = m["seq"]?.number, m["transient"] == nil else { continue }
                #expect(seq == lastSeq + 1)
                lastSeq = seq
                if m["type"]?.string == "participant.left", m["reason"]?.string == "slow_consumer" { slowLeft = true }
            }
        }
        #expect(slowLeft, "the slow reader was not closed after \(sent) events, last seq \(lastSeq)")
        slow.socket.resumeReading()
        let closed = try slow.waitFor(timeout: .seconds(30)) { $0["type"]?.string == "$closed" }
        #expect(closed["code"]?.number == 4008)
    }
}
