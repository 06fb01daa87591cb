import Foundation
import MeridianSync
import Testing

/// A job that holds its thread until released, so that a test knows what queued behind it.
private final class Gate: Sendable {
    let entered = DispatchSemaphore(value: 0)
    let released = DispatchSemaphore(value: 0)

    func pass() {
        entered.signal()
        released.wait()
    }
}

/// A worker whose job 0 holds its thread until released; it records its turns' jobs once done.
private final class HeldWorker: Sendable {
    let worker: WorkerThread<Int>
    let gate: Gate
    let turns: Locked<[[Int]]>

    init(name: String) {
        let (gate, turns) = (Gate(), Locked<[[Int]]>([]))
        (self.gate, self.turns) = (gate, turns)
        worker = WorkerThread(name: name)
        worker.start { next in
            while let turn = next.next() {
                if turn.jobs.first == 0 { gate.pass() }
                turns.withLock { $0.append(turn.jobs) }
            }
        }
    }

    var done: [Int] { turns.withLock { $0.flatMap { $0 } } }

    /// Submits job 0, then `queued` once the thread holds it.
    func hold(thenQueue queued: ClosedRange<Int>) {
        worker.submit(0)
        gate.entered.wait()
        for job in queued { worker.submit(job) }
    }
}

/// Long enough for anything that should happen to happen; reached only when it does not.
private func waited(_ semaphore: DispatchSemaphore) -> Bool {
    semaphore.wait(timeout: .now() + 10) == .success
}

@Suite struct WorkerThreadTests {
    @Test func jobsRunInTheOrderSubmittedInTurnsOfAtMostMaxBatch() {
        let worker = WorkerThread<Int>(name: "test-order", maxBatch: 7)
        let turns = Locked<[[Int]]>([])
        // Queued before the thread starts: every turn is a full one but the last.
        for job in 0..<1000 { #expect(worker.submit(job)) }
        worker.start { next in
            while let turn = next.next() { turns.withLock { $0.append(turn.jobs) } }
        }
        worker.stop()
        let seen = turns.withLock { $0 }
        #expect(seen.flatMap { $0 } == Array(0..<1000))
        #expect(seen.map(\.count) == Array(repeating: 7, count: 142) + [6])
    }

    @Test func eachSubmittersJobsKeepTheirOrder() {
        let worker = WorkerThread<(thread: Int, job: Int)>(name: "test-submitters")
        let seen = Locked<[[Int]]>(Array(repeating: [], count: 4))
        worker.start { turns in
            while let turn = turns.next() {
                seen.withLock { seen in for (thread, job) in turn.jobs { seen[thread].append(job) } }
            }
        }
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for job in 0..<2000 { worker.submit((thread, job)) }
        }
        worker.stop()
        #expect(seen.withLock { $0 } == Array(repeating: Array(0..<2000), count: 4))
    }

    /// Each job is submitted once the thread has finished the previous one and is on its way
    /// to sleep: a wake-up lost in between leaves a job waiting, and the test fails.
    @Test func aJobWakesTheThreadWhereverItIsOnItsWayToSleep() {
        let worker = WorkerThread<Int>(name: "test-wake")
        let done = DispatchSemaphore(value: 0)
        worker.start { turns in
            while let turn = turns.next() { for _ in turn.jobs { done.signal() } }
        }
        for job in 0..<2000 {
            worker.submit(job)
            guard waited(done) else {
                Issue.record("job \(job) was not run: its wake-up was lost")
                break
            }
        }
        worker.stop()
    }

    @Test func jobsQueuedDuringATurnAreTheNextTurnTogether() {
        let held = HeldWorker(name: "test-batch")
        held.hold(thenQueue: 1...9)
        held.gate.released.signal()
        held.worker.flush()
        #expect(held.turns.withLock { $0 } == [[0], Array(1...9)])
        held.worker.stop()
    }

    @Test func flushReturnsOnceEveryJobSubmittedIsDone() {
        let held = HeldWorker(name: "test-flush")
        held.hold(thenQueue: 1...99)
        #expect(held.worker.pending == 100)
        DispatchQueue.global().async { held.gate.released.signal() }
        held.worker.flush()
        #expect(held.done == Array(0...99))
        #expect(held.worker.pending == 0)
        held.worker.stop()
    }

    @Test func stopRunsWhatIsQueuedThenRefusesNewJobs() {
        let held = HeldWorker(name: "test-stop")
        held.hold(thenQueue: 1...5)
        DispatchQueue.global().async { held.gate.released.signal() }
        held.worker.stop()
        #expect(held.done == Array(0...5))
        #expect(!held.worker.submit(6))
        #expect(held.worker.pending == 0)
    }

    @Test func stopRefusingQueuedHandsThemBackAndWaitsForTheRunningTurn() {
        let held = HeldWorker(name: "test-refuse")
        held.hold(thenQueue: 1...5)
        var handed: [Int] = []
        held.worker.stop { queued in
            // Handed back before the running turn ends.
            #expect(held.done.isEmpty)
            handed = queued
            held.gate.released.signal()
        }
        #expect(handed == Array(1...5))
        #expect(held.done == [0])
    }

    @Test func aWorkerNeverStartedStopsAtOnceAndNeverStarts() {
        let worker = WorkerThread<Int>(name: "test-unstarted")
        worker.submit(1)
        var handed: [Int] = []
        worker.stop { handed = $0 }
        #expect(handed == [1])
        let ran = Locked(false)
        worker.start { _ in ran.withLock { $0 = true } }
        worker.stop()
        #expect(!ran.withLock { $0 })
    }

    @Test func aBodyThatReturnsAfterATurnLeavesNothingPending() {
        let worker = WorkerThread<Int>(name: "test-leave")
        worker.submit(1)
        worker.submit(2)
        worker.start { turns in _ = turns.next() }
        worker.stop()
        #expect(worker.pending == 0)
        if worker.pending == 0 { worker.flush() }
    }

    @Test func aDeadlineGivesAnEmptyTurnWhenItComes() throws {
        let worker = WorkerThread<Int>(name: "test-deadline")
        let deadline = ContinuousClock.now + .milliseconds(50)
        let turn = Locked<(jobs: [Int], at: ContinuousClock.Instant)?>(nil)
        let taken = DispatchSemaphore(value: 0)
        worker.start { turns in
            if let first = turns.next(until: deadline) { turn.withLock { $0 = (first.jobs, .now) } }
            taken.signal()
            while turns.next() != nil {}
        }
        #expect(waited(taken))
        let (jobs, at) = try #require(turn.withLock { $0 })
        #expect(jobs.isEmpty)
        #expect(at >= deadline)
        worker.stop()
    }

    @Test func aJobEndsTheWaitForADeadlineEarly() {
        let worker = WorkerThread<Int>(name: "test-early")
        let first = Locked<[Int]?>(nil)
        let taken = DispatchSemaphore(value: 0)
        worker.start { turns in
            let turn = turns.next(until: .now + .seconds(3600))
            first.withLock { $0 = turn?.jobs }
            taken.signal()
            while turns.next() != nil {}
        }
        worker.submit(7)
        #expect(waited(taken))
        #expect(first.withLock { $0 } == [7])
        worker.stop()
    }

    /// Sleeps that time out while jobs arrive: a thread that timed out just as it was woken
    /// must neither lose the job nor its next sleep to the stale wake-up.
    @Test func shortDeadlinesLoseNoJob() {
        let worker = WorkerThread<Int>(name: "test-timeouts")
        let seen = Locked<[Int]>([])
        worker.start { turns in
            while let turn = turns.next(until: .now + .microseconds(100)) {
                seen.withLock { $0 += turn.jobs }
            }
        }
        for job in 0..<5000 {
            worker.submit(job)
            if job % 64 == 0 { worker.flush() }
        }
        worker.flush()
        #expect(seen.withLock { $0 } == Array(0..<5000))
        worker.stop()
    }

    @Test func aWakeUpGivesATurnWithoutJobs() {
        let worker = WorkerThread<Never>(name: "test-wake-up")
        let turns = DispatchSemaphore(value: 0)
        worker.start { next in
            while next.next() != nil { turns.signal() }
        }
        for _ in 0..<500 {
            worker.wake()
            guard waited(turns) else {
                Issue.record("a wake-up gave no turn")
                break
            }
        }
        worker.stop()
    }

    @Test func aFullQueueRefusesNewJobsAndCountsThem() {
        let worker = WorkerThread<Int>(name: "test-refuse-new", limit: .init(capacity: 3, whenFull: .refuseNew))
        #expect((0..<5).map { worker.submit($0) } == [true, true, true, false, false])
        #expect(worker.dropped == 2)
        let first = Locked<WorkerThread<Int>.Turn?>(nil)
        worker.start { turns in
            if let turn = turns.next() { first.withLock { $0 = turn } }
            while turns.next() != nil {}
        }
        worker.stop()
        #expect(first.withLock { $0?.jobs } == [0, 1, 2])
        #expect(first.withLock { $0?.dropped } == 2)
    }

    @Test func aFullQueueDropsItsOldestByWeightDownToTheNewest() {
        let worker = WorkerThread<[Int]>(name: "test-drop-oldest", limit: .init(capacity: 5, whenFull: .dropOldest) { $0.count })
        worker.submit([1, 1])
        worker.submit([2, 2])
        worker.submit([3, 3])  // 6 > 5: [1, 1] gives way
        #expect(worker.dropped == 2)
        worker.submit(Array(repeating: 4, count: 6))  // heavier than the capacity alone: kept
        #expect(worker.dropped == 6)
        let first = Locked<WorkerThread<[Int]>.Turn?>(nil)
        worker.start { turns in
            if let turn = turns.next() { first.withLock { $0 = turn } }
            while turns.next() != nil {}
        }
        worker.stop()
        #expect(first.withLock { $0?.jobs } == [Array(repeating: 4, count: 6)])
        #expect(first.withLock { $0?.dropped } == 6)
    }

    @Test func threadsShareTheQueue() {
        let worker = WorkerThread<Int>(name: "test-pool", threads: 3, maxBatch: 1)
        let inside = Locked(0)
        let allInside = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        worker.start { turns in
            while turns.next() != nil {
                if inside.withLock({ $0 += 1; return $0 }) == 3 { allInside.signal() }
                release.wait()
            }
        }
        for job in 0..<3 { worker.submit(job) }
        // Three jobs running at once: one on each thread.
        #expect(waited(allInside))
        #expect(worker.pending == 3)
        for _ in 0..<3 { release.signal() }
        worker.flush()
        #expect(worker.pending == 0)
        worker.stop()
    }

    /// A thread that waits elsewhere (in `poll`, for the Redis subscriber) is reached there by
    /// the interrupt, for a job and for the stop.
    @Test func aThreadWaitingElsewhereIsInterrupted() {
        let elsewhere = DispatchSemaphore(value: 0)
        let worker = WorkerThread<Int>(name: "test-interrupt", interrupt: { elsewhere.signal() })
        let seen = Locked<[Int]>([])
        let got = DispatchSemaphore(value: 0)
        worker.start { turns in
            while let turn = turns.next(until: .now) {
                if !turn.jobs.isEmpty {
                    seen.withLock { $0 += turn.jobs }
                    got.signal()
                }
                elsewhere.wait()
            }
        }
        worker.submit(1)
        #expect(waited(got))
        worker.submit(2)
        #expect(waited(got))
        let stopped = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            worker.stop()
            stopped.signal()
        }
        #expect(waited(stopped))
        #expect(seen.withLock { $0 } == [1, 2])
    }

    @Test func theThreadCarriesItsNameForTheKernel() {
        let worker = WorkerThread<Never>(name: "test-a-long-thread-name")
        let name = Locked("")
        // A body that returns ends its thread; stop then only waits for that.
        worker.start { _ in
            let comm = try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)
            name.withLock { $0 = comm ?? "" }
        }
        worker.stop()
        #expect(name.withLock { $0 } == "test-a-long-thr\n")
    }
}
