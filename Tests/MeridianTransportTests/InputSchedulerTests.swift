@testable import MeridianTransport
import Testing

@Suite struct InputSchedulerTests {
    /// Serves `count` messages, each connection having `waiting[id]` of them; returns the order.
    private func serve(_ scheduler: inout InputScheduler, waiting: inout [ConnectionID: Int], count: Int) -> [ConnectionID] {
        var order: [ConnectionID] = []
        while order.count < count, let (id, _) = scheduler.next() {
            order.append(id)
            waiting[id, default: 0] -= 1
            scheduler.served(id, cost: 1, more: waiting[id, default: 0] > 0)
        }
        return order
    }

    @Test func busyConnectionsTakeTurnsOfAQuantum() {
        var scheduler = InputScheduler(quantum: 2)
        var waiting: [ConnectionID: Int] = [1: 5, 2: 5, 3: 1]
        for id: ConnectionID in [1, 2, 3] { scheduler.arrived(id, sparse: false) }
        let order = serve(&scheduler, waiting: &waiting, count: 11)
        #expect(order == [1, 1, 2, 2, 3, 1, 1, 2, 2, 1, 2])
        #expect(scheduler.isEmpty)
    }

    @Test func aSparseConnectionGoesAheadOfTheBusyOnes() {
        var scheduler = InputScheduler(quantum: 4)
        var waiting: [ConnectionID: Int] = [1: 100, 2: 100]
        scheduler.arrived(1, sparse: false)
        scheduler.arrived(2, sparse: false)
        _ = serve(&scheduler, waiting: &waiting, count: 6)
        // A quiet member's request arrives while both flood: it is next.
        waiting[9] = 1
        scheduler.arrived(9, sparse: true)
        let next = scheduler.next()
        #expect(next?.id == 9 && next?.sparse == true)
        scheduler.served(9, cost: 1, more: false)
        #expect(!scheduler.isWaiting(9))
        // Then the busy ones go on where they were.
        #expect(scheduler.next()?.id == 2)
    }

    @Test func aSparseConnectionThatKeepsSendingJoinsTheBusyOnesAfterItsQuantum() {
        var scheduler = InputScheduler(quantum: 2)
        var waiting: [ConnectionID: Int] = [1: 10, 7: 10]
        scheduler.arrived(1, sparse: false)
        scheduler.arrived(7, sparse: true)
        let order = serve(&scheduler, waiting: &waiting, count: 8)
        #expect(order == [7, 7, 1, 1, 7, 7, 1, 1])
    }

    @Test func demotedAndRemovedConnections() {
        var scheduler = InputScheduler(quantum: 3)
        scheduler.arrived(1, sparse: false)
        scheduler.arrived(2, sparse: true)
        scheduler.arrived(3, sparse: true)
        scheduler.demote(2)
        #expect(scheduler.next()?.id == 3)
        scheduler.remove(3)
        // 2 now waits behind 1.
        #expect(scheduler.next()?.id == 1)
        scheduler.served(1, cost: 1, more: false)
        let next = scheduler.next()
        #expect(next?.id == 2 && next?.sparse == false)
        scheduler.remove(2)
        #expect(scheduler.next() == nil)
        #expect(scheduler.isEmpty)
        // An id that arrives again after it left waits once.
        scheduler.arrived(1, sparse: false)
        scheduler.arrived(1, sparse: true)
        #expect(scheduler.count == 1)
    }

    @Test func largeMessagesCostMore() {
        #expect(InputScheduler.cost(ofMessageBytes: 100) == 1)
        #expect(InputScheduler.cost(ofMessageBytes: 4096) == 2)
        #expect(InputScheduler.cost(ofMessageBytes: 65_536) == 17)
        var scheduler = InputScheduler(quantum: 8)
        scheduler.arrived(1, sparse: false)
        scheduler.arrived(2, sparse: false)
        // One 64 KiB message uses the whole turn of 1.
        #expect(scheduler.next()?.id == 1)
        scheduler.served(1, cost: 17, more: true)
        #expect(scheduler.next()?.id == 2)
    }
}

@Suite struct InboxTests {
    @Test func messagesComeOutWholeAndInOrder() {
        var inbox = Inbox()
        let messages = (0..<2000).map { i in Array(String(repeating: "m\(i)", count: i % 7 + 1).utf8) }
        for (i, m) in messages.enumerated() {
            m.withUnsafeBytes { inbox.append($0) }
            if i % 3 == 2 {
                // Interleaved reads: the buffer is compacted as it goes.
                let first = messages[i / 3]
                #expect(inbox.withFirst { Array($0) } == first)
                #expect(inbox.firstSize == first.count)
                inbox.removeFirst()
            }
        }
        var out: [[UInt8]] = []
        while let m = inbox.withFirst({ Array($0) }) {
            out.append(m)
            inbox.removeFirst()
        }
        #expect(out == Array(messages[(2000 / 3)...]))
        #expect(inbox.isEmpty && inbox.bytes == 0 && inbox.count == 0)
    }

    @Test func countsBytesAndEmptyMessages() {
        var inbox = Inbox()
        [UInt8]().withUnsafeBytes { inbox.append($0) }
        Array("abc".utf8).withUnsafeBytes { inbox.append($0) }
        #expect(inbox.count == 2 && inbox.bytes == 3)
        #expect(inbox.withFirst { $0.count } == 0)
        inbox.removeFirst()
        #expect(inbox.withFirst { Array($0) } == Array("abc".utf8))
        inbox.removeAll()
        #expect(inbox.isEmpty && inbox.withFirst { $0.count } == nil)
    }
}

@Suite struct IDQueueTests {
    @Test func firstInFirstOutAcrossCompaction() {
        var queue = IDQueue()
        var expected: [ConnectionID] = []
        for n: UInt64 in 0..<500 {
            let i = ConnectionID(rawValue: n)
            queue.append(i)
            expected.append(i)
            if n % 2 == 1 {
                #expect(queue.first == expected.removeFirst())
                queue.removeFirst()
            }
        }
        queue.remove(expected[10])
        expected.remove(at: 10)
        var out: [ConnectionID] = []
        while let id = queue.first {
            out.append(id)
            queue.removeFirst()
        }
        #expect(out == expected)
        #expect(queue.isEmpty)
    }
}

/// Plain numbers for ids in these tests, where no server gave them out.
extension ConnectionID: ExpressibleByIntegerLiteral {
    public init(integerLiteral value: UInt64) {
        self.init(rawValue: value)
    }
}
