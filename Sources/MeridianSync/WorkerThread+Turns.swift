import Dispatch

extension WorkerThread {
    /// What one turn of a thread gives it to do.
    public struct Turn: Sendable {
        /// The jobs queued since the previous turn, oldest first (at most `maxBatch`); empty when
        /// the turn came from ``WorkerThread/wake()`` or a deadline.
        public let jobs: [Job]
        /// What the ``Limit`` dropped since the previous turn (of any thread).
        public let dropped: Int
    }

    /// One thread's side of a worker: how its body asks for turns. Made on that thread and
    /// used there only.
    public final class Turns {
        private let worker: WorkerThread
        /// Signalled once by whoever takes this thread out of the sleepers.
        private let wake = DispatchSemaphore(value: 0)
        /// The last turn's jobs; the buffer is traded with the queue's on the next turn.
        private var jobs: [Job] = []

        init(_ worker: WorkerThread) {
            self.worker = worker
        }

        private enum Step {
            case turn(dropped: Int)
            case sleep
            case end
        }

        /// Ends the previous turn and waits for the next: queued jobs, else (when the worker is
        /// not stopping) a ``WorkerThread/wake()`` or `deadline`, whichever comes first; a
        /// deadline already past gives a turn at once. Nil once the worker stops and nothing
        /// is left for this thread: the body should then return.
        public func next(until deadline: ContinuousClock.Instant? = nil) -> Turn? {
            // The previous turn's jobs are done with: let them go before sleeping.
            var finished = jobs.count
            jobs.removeAll(keepingCapacity: true)
            while true {
                var waiters: [DispatchSemaphore] = []
                let step = worker.shared.withLock { shared -> Step in
                    if finished > 0 {
                        shared.inHand -= finished
                        finished = 0
                        if shared.isIdle { waiters = shared.takeWaiters() }
                    }
                    if !shared.queue.isEmpty {
                        shared.take(into: &jobs, maxBatch: worker.maxBatch, limit: worker.limit)
                    } else if shared.stopping {
                        return .end
                    } else if !shared.woken, deadline.map({ ContinuousClock.now < $0 }) ?? true {
                        shared.sleepers.append(wake)
                        return .sleep
                    }
                    shared.woken = false
                    defer { shared.droppedSinceTurn = 0 }
                    return .turn(dropped: shared.droppedSinceTurn)
                }
                for waiter in waiters { waiter.signal() }
                switch step {
                case .turn(let dropped):
                    return Turn(jobs: jobs, dropped: dropped)
                case .end:
                    return nil
                case .sleep:
                    sleep(until: deadline)
                }
            }
        }

        /// The thread's body returned: how many jobs its last turn held (now done with).
        func leave() -> Int {
            defer { jobs.removeAll() }
            return jobs.count
        }

        /// Sleeps until woken or `deadline`. A thread whose sleep times out takes itself out of
        /// the sleepers, unless another thread already did: that one's signal is then owed to
        /// it and taken here, so that it does not end a later sleep early.
        private func sleep(until deadline: ContinuousClock.Instant?) {
            guard let deadline else { return wake.wait() }
            if wake.wait(timeout: .now() + Self.interval(deadline - .now)) == .success { return }
            let owed = worker.shared.withLock { shared -> Bool in
                guard let index = shared.sleepers.firstIndex(where: { $0 === wake }) else { return true }
                shared.sleepers.remove(at: index)
                return false
            }
            if owed { wake.wait() }
        }

        /// `duration` for Dispatch: at least a microsecond, at most a day (a longer sleep only
        /// looks again).
        private static func interval(_ duration: Duration) -> DispatchTimeInterval {
            let (seconds, attoseconds) = duration.components
            guard seconds < 86_400 else { return .seconds(86_400) }
            return .nanoseconds(max(1_000, Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)))
        }
    }
}
