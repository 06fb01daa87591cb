import Foundation
import MeridianSync
import Testing

@Suite struct LockedTests {
    @Test func returnsWhatTheBodyReturns() {
        let locked = Locked([1, 2])
        let count = locked.withLock { values -> Int in
            values.append(3)
            return values.count
        }
        #expect(count == 3)
        #expect(locked.withLock { $0 } == [1, 2, 3])
    }

    struct Refused: Error {}

    @Test func unlocksWhenTheBodyThrows() {
        let locked = Locked(0)
        #expect(throws: Refused.self) {
            try locked.withLock { (value: inout Int) throws(Refused) in
                value = 1
                throw Refused()
            }
        }
        #expect(locked.withLock { $0 } == 1)
    }

    /// Threads that only meet under the lock, holding it long enough to wait for each other
    /// (then `Mutex` hands it over in the kernel, which TSan does not see). Under
    /// `make test-tsan` this fails if the lock is not annotated for ThreadSanitizer.
    @Test func ordersThreadsThatShareTheValue() {
        let locked = Locked((count: 0, log: [Int]()))
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for _ in 0..<1000 {
                locked.withLock { state in
                    for _ in 0..<100 { state.count += 1 }
                    state.log.append(thread)
                }
            }
        }
        let state = locked.withLock { $0 }
        #expect(state.count == 400_000)
        #expect(state.log.count == 4000)
    }
}
