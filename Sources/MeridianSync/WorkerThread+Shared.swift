import Dispatch

extension WorkerThread {
    /// What the worker's threads share with the threads that submit, wake, flush and stop.
    struct Shared: Awaitable {
        var queue: [Job] = []
        /// What the queued jobs weigh, kept only under a ``Limit``.
        var queuedWeight = 0
        /// Jobs taken by threads whose turn has not ended yet.
        var inHand = 0
        /// Dropped by the ``Limit`` in all, and since the last turn was taken.
        var dropped = 0
        var droppedSinceTurn = 0
        /// ``WorkerThread/wake()`` was called since the last turn.
        var woken = false
        var started = false
        var stopping = false
        /// Threads whose body has not returned.
        var running = 0
        /// The semaphores of the threads asleep waiting for a turn. Whoever takes one out of
        /// this list signals it, once.
        var sleepers: [DispatchSemaphore] = []
        /// Threads in ``WorkerThread/flush()`` or a stop, woken whenever the worker goes idle
        /// or a thread ends (each then looks again at what it waits for).
        var waiters: [DispatchSemaphore] = []

        var isIdle: Bool { queue.isEmpty && inHand == 0 }

        /// Queues `job` as `limit` allows; false when it was refused.
        mutating func admit(_ job: Job, under limit: Limit?) -> Bool {
            guard let limit else {
                queue.append(job)
                return true
            }
            let weight = limit.weight(job)
            switch limit.whenFull {
            case .refuseNew:
                guard queuedWeight + weight <= limit.capacity else {
                    countDropped(weight)
                    return false
                }
                queue.append(job)
                queuedWeight += weight
            case .dropOldest:
                queue.append(job)
                queuedWeight += weight
                while queuedWeight > limit.capacity, queue.count > 1 {
                    let oldest = limit.weight(queue.removeFirst())
                    queuedWeight -= oldest
                    countDropped(oldest)
                }
            }
            return true
        }

        private mutating func countDropped(_ weight: Int) {
            dropped += weight
            droppedSinceTurn += weight
        }

        /// Moves the next turn's jobs into `jobs` (empty): all of them when they fit in
        /// `maxBatch`, by trading buffers so that neither is copied, else the first `maxBatch`.
        mutating func take(into jobs: inout [Job], maxBatch: Int, limit: Limit?) {
            if queue.count <= maxBatch {
                swap(&queue, &jobs)
                queuedWeight = 0
            } else {
                jobs.append(contentsOf: queue[..<maxBatch])
                queue.removeFirst(maxBatch)
                if let limit { queuedWeight -= jobs.reduce(0) { $0 + limit.weight($1) } }
            }
            inHand += jobs.count
        }

        /// Empties the queue (its jobs were handed back).
        mutating func clearQueue() {
            queue.removeAll()
            queuedWeight = 0
        }

        mutating func takeWaiters() -> [DispatchSemaphore] {
            defer { waiters.removeAll() }
            return waiters
        }
    }
}
