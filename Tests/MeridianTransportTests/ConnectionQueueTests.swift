import Testing
@testable import MeridianTransport

@Suite struct ConnectionQueueTests {
    private func frame(_ text: String) -> OutboundFrame { OutboundFrame(text: Array(text.utf8)) }

    /// Drains the queue a frame at a time (the capacity of the next one), as WRITEABLE does.
    private func drain(_ queue: inout ConnectionQueue) -> [String] {
        var out: [String] = []
        while let size = queue.firstSize() {
            let buffer = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 1)
            defer { buffer.deallocate() }
            #expect(queue.drain(into: buffer, capacity: size) == size)
            out.append(String(decoding: UnsafeRawBufferPointer(start: buffer, count: size).dropFirst(2), as: UTF8.self))
        }
        return out
    }

    @Test func discreteFramesKeepOrderAndCountBytes() {
        var queue = ConnectionQueue()
        queue.append(frame("a"), key: nil)
        queue.append(frame("bb"), key: nil)
        #expect(queue.bytes == 3 + 4)
        #expect(drain(&queue) == ["a", "bb"])
        #expect(queue.bytes == 0)
        #expect(queue.isEmpty)
    }

    @Test func transientFrameSupersedesEarlierOneWithSameKey() {
        var queue = ConnectionQueue()
        #expect(queue.append(frame("t1"), key: 7) == false)
        queue.append(frame("d1"), key: nil)
        #expect(queue.append(frame("t2"), key: 7) == true)
        queue.append(frame("u1"), key: 8)
        #expect(queue.count == 3)
        #expect(queue.bytes == 4 * 3)
        #expect(drain(&queue) == ["d1", "t2", "u1"])
    }

    @Test func keyIsFreeAgainOnceWritten() {
        var queue = ConnectionQueue()
        queue.append(frame("t1"), key: 1)
        #expect(drain(&queue) == ["t1"])
        #expect(queue.append(frame("t2"), key: 1) == false)
        #expect(drain(&queue) == ["t2"])
    }

    @Test func manySupersededEntriesAreCompacted() {
        var queue = ConnectionQueue()
        queue.append(frame("first"), key: nil)
        for index in 0..<10_000 { queue.append(frame("t\(index)"), key: 3) }
        queue.append(frame("last"), key: nil)
        #expect(queue.count == 3)
        #expect(drain(&queue) == ["first", "t9999", "last"])
    }

    @Test func removeAllEmptiesEverything() {
        var queue = ConnectionQueue()
        queue.append(frame("a"), key: 1)
        queue.append(frame("b"), key: nil)
        queue.removeAll()
        #expect(queue.bytes == 0)
        #expect(queue.firstSize() == nil)
        #expect(queue.append(frame("c"), key: 1) == false)
    }

    @Test func drainCopiesWholeFramesThatFit() {
        var queue = ConnectionQueue()
        for text in ["aa", "bbb", "cccc"] { queue.append(frame(text), key: nil) }
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: 64, alignment: 1)
        defer { buffer.deallocate() }
        // "aa" (4 bytes) and "bbb" (5) fit in 10; "cccc" (6) does not.
        #expect(queue.drain(into: buffer, capacity: 10) == 9)
        #expect(Array(UnsafeRawBufferPointer(start: buffer, count: 9)) == [0x81, 2] + Array("aa".utf8) + [0x81, 3] + Array("bbb".utf8))
        #expect(queue.count == 1)
        #expect(queue.bytes == 6)
    }

    @Test func aFrameLivesWhileAnyQueueHoldsItAndIsFreedAfter() {
        weak var watched: OutboundFrame?
        var first = ConnectionQueue(), second = ConnectionQueue()
        do {
            let shared = frame("shared")
            watched = shared
            first.append(shared, key: nil)
            second.append(shared, key: 4)
            #expect(shared.holders == 2)
        }
        #expect(watched != nil, "queued frames stay alive")
        #expect(drain(&first) == ["shared"])
        #expect(watched != nil, "the other queue still holds it")
        second.append(frame("newer"), key: 4)  // supersedes it there
        #expect(drain(&second) == ["newer"])
        #expect(watched == nil, "freed once no queue holds it")
    }
}
