import Testing
@testable import MeridianTransport

@Suite struct ConnectionQueueTests {
    private func frame(_ text: String) -> OutboundFrame { OutboundFrame(text: Array(text.utf8)) }

    private func drain(_ queue: inout ConnectionQueue) -> [String] {
        var out: [String] = []
        while let next = queue.first() {
            out.append(String(decoding: next.bytes.dropFirst(2), as: UTF8.self))
            queue.removeFirst()
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
        #expect(queue.first() == nil)
        #expect(queue.append(frame("c"), key: 1) == false)
    }
}
