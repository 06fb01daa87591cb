import Testing
@testable import MeridianTransport

@Suite struct ConnectionQueueTests {
    private func frame(_ text: String) -> OutboundFrame { OutboundFrame(text: Array(text.utf8)) }

    /// Drains the queue as WRITEABLE does, `capacity` bytes per write, and splits what was
    /// written back into the frames' payloads (all short, 7-bit lengths).
    private func drain(_ queue: inout ConnectionQueue, capacity: Int = 4096) -> (texts: [String], conflated: Int) {
        var wire: [UInt8] = []
        var conflated = 0
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 1)
        defer { buffer.deallocate() }
        while !queue.isEmpty {
            let (copied, dropped) = queue.drain(into: buffer, capacity: capacity)
            wire += Array(UnsafeRawBufferPointer(start: buffer, count: copied))
            conflated += dropped
        }
        var texts: [String] = []
        var i = 0
        while i < wire.count {
            let length = Int(wire[i + 1])
            texts.append(String(decoding: wire[(i + 2)..<(i + 2 + length)], as: UTF8.self))
            i += 2 + length
        }
        return (texts, conflated)
    }

    private func fragment(_ text: String, first: Bool, last: Bool) -> OutboundFrame {
        let payload = Array(text.utf8)
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: OutboundFrame.headerRoom + payload.count)
        (buffer + OutboundFrame.headerRoom).initialize(from: payload, count: payload.count)
        return OutboundFrame(takingBuffer: buffer, count: OutboundFrame.headerRoom + payload.count, first: first, last: last)
    }

    /// A connection closed while a message in fragments is partly written keeps what finishes
    /// that message, and only that; closed between messages, it keeps nothing.
    @Test func aCloseMidMessageKeepsTheRestOfThatMessageOnly() {
        var queue = ConnectionQueue()
        queue.append(fragment("w1", first: true, last: false))
        queue.append(fragment("w2", first: false, last: false))
        queue.append(fragment("w3", first: false, last: true))
        queue.append(frame("event"))
        queue.append(fragment("n1", first: true, last: false))
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 1)
        defer { buffer.deallocate() }
        // One write of the first fragment only.
        #expect(queue.drain(into: buffer, capacity: 4).copied == 4)
        #expect(queue.midMessage)
        queue.removeAllButTheMessageInProgress()
        #expect(queue.count == 2)
        #expect(queue.bytes == 4 + 4)
        #expect(drain(&queue).texts == ["w2", "w3"])
        #expect(!queue.midMessage)

        // Between messages: nothing is kept.
        queue.append(frame("a"))
        queue.append(fragment("b1", first: true, last: false))
        queue.append(fragment("b2", first: false, last: true))
        #expect(queue.drain(into: buffer, capacity: 3).copied == 3)
        #expect(!queue.midMessage)
        queue.removeAllButTheMessageInProgress()
        #expect(queue.isEmpty && queue.bytes == 0)
    }

    @Test func framesKeepOrderAndCountBytes() {
        var queue = ConnectionQueue()
        queue.append(frame("a"))
        queue.append(frame("bb"))
        #expect(queue.bytes == 3 + 4)
        #expect(drain(&queue).texts == ["a", "bb"])
        #expect(queue.bytes == 0)
        #expect(queue.isEmpty)
    }

    @Test func supersededFramesAreSkippedWhenWritten() {
        var queue = ConnectionQueue()
        let older = frame("t1")
        queue.append(older)
        queue.append(frame("d1"))
        queue.append(frame("t2"))
        older.superseded = true
        let (texts, conflated) = drain(&queue)
        #expect(texts == ["d1", "t2"])
        #expect(conflated == 1)
        #expect(queue.bytes == 0)
    }

    @Test func aQueueThatKeepsUpWritesSupersededFrames() {
        var queue = ConnectionQueue()
        let older = frame("t1")
        queue.append(older)
        queue.append(frame("t2"))
        older.superseded = true
        #expect(queue.firstSize(conflating: false) == 4)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 1)
        defer { buffer.deallocate() }
        #expect(queue.drain(into: buffer, capacity: 64, conflating: false) == (8, 0))
        #expect(Array(UnsafeRawBufferPointer(start: buffer, count: 8)) == [0x81, 2] + Array("t1".utf8) + [0x81, 2] + Array("t2".utf8))
        #expect(queue.isEmpty && queue.bytes == 0)
    }

    @Test func compactionDropsSupersededFramesAndTheirBytes() {
        var queue = ConnectionQueue()
        queue.append(frame("first"))
        var previous: OutboundFrame?
        for index in 0..<1_000 {
            let next = frame("t\(index)")
            previous?.superseded = true
            queue.append(next)
            previous = next
        }
        queue.append(frame("last"))
        #expect(queue.count == 1_002)
        #expect(queue.compact() == 999)
        #expect(queue.count == 3)
        #expect(queue.bytes == 7 + 6 + 6)
        #expect(drain(&queue).texts == ["first", "t999", "last"])
    }

    @Test func firstSizeSkipsSupersededFramesAndCountsThem() {
        var queue = ConnectionQueue()
        let older = frame("t1")
        queue.append(older)
        queue.append(frame("t2"))
        older.superseded = true
        #expect(queue.firstSize() == 4)
        #expect(queue.bytes == 4)
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 1)
        defer { buffer.deallocate() }
        #expect(queue.drain(into: buffer, capacity: 64) == (4, 1))
    }

    @Test func drainCopiesWholeFramesThatFit() {
        var queue = ConnectionQueue()
        for text in ["aa", "bbb", "cccc"] { queue.append(frame(text)) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 1)
        defer { buffer.deallocate() }
        // "aa" (4 bytes) and "bbb" (5) fit in 10; "cccc" (6) does not: frames are never split.
        #expect(queue.drain(into: buffer, capacity: 10) == (9, 0))
        #expect(Array(UnsafeRawBufferPointer(start: buffer, count: 9)) == [0x81, 2] + Array("aa".utf8) + [0x81, 3] + Array("bbb".utf8))
        #expect(queue.count == 1)
        #expect(queue.bytes == 6)
    }

    @Test func removeAllEmptiesEverything() {
        var queue = ConnectionQueue()
        queue.append(frame("a"))
        queue.append(frame("b"))
        queue.removeAll()
        #expect(queue.bytes == 0)
        #expect(queue.isEmpty)
    }

    @Test func aFrameLivesWhileAnyQueueHoldsItAndIsFreedAfter() {
        weak var watched: OutboundFrame?
        var first = ConnectionQueue(), second = ConnectionQueue()
        do {
            let shared = frame("shared")
            watched = shared
            first.append(shared)
            second.append(shared)
            #expect(shared.holders == 2)
        }
        #expect(watched != nil, "queued frames stay alive")
        #expect(drain(&first).texts == ["shared"])
        #expect(watched != nil, "the other queue still holds it")
        watched?.superseded = true
        second.append(frame("newer"))
        #expect(drain(&second).texts == ["newer"])
        #expect(watched == nil, "freed once no queue holds it")
    }
}
