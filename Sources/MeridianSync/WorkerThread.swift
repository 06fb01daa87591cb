import Dispatch
import Foundation

/// A thread of its own (or a few sharing one queue) that works through jobs handed to it from
/// any thread: the storage writer and readers, the event-log and log writers, the Redis
/// publisher and subscriber, the cluster keeper.
///
/// Other threads ``submit(_:)`` jobs, ``wake()`` it, ``flush()`` (wait until it has done all it
/// was given) and ``stop()`` it. The thread runs the body given to ``start(_:)``, which asks for
/// work turn by turn with ``Turns/next(until:)``:
///
/// ```swift
/// worker.start { turns in
///     while let turn = turns.next() { write(turn.jobs) }
/// }
/// ```
///
/// A turn holds the jobs queued since the previous one, in the order they were submitted (up to
/// `maxBatch` of them), or none when the thread was woken or its deadline came; `next` sleeps
/// until there is one and returns nil once the worker stops, so the body then returns and the
/// thread ends. The body keeps what lives across turns (a connection, a buffer, the next
/// deadline) in its own local variables: they never leave the thread.
///
/// Whatever the body captures (usually its owner) lives until the threads end: a worker that is
/// never stopped keeps its owner for the life of the process, as the log writer wants.
public final class WorkerThread<Job: Sendable>: Sendable {
    /// The thread's name, as debuggers and `top -H` show it (the kernel keeps 15 bytes of it).
    public let name: String
    /// How many threads share the queue.
    public let threads: Int
    /// Most jobs in one turn.
    public let maxBatch: Int
    let limit: Limit?
    let interrupt: (@Sendable () -> Void)?
    let shared = Locked(Shared())

    /// A worker of `threads` threads (named `name`, or `name-0`, `name-1`… when there are
    /// several), whose turns take at most `maxBatch` jobs; nothing runs until ``start(_:)``.
    ///
    /// `limit` bounds the queue (see ``Limit``); without one it grows as needed. `interrupt` is
    /// for a thread that also waits elsewhere (in `poll` on a socket): it is called, on the
    /// calling thread, whenever a job, a wake-up or a stop finds no thread asleep in
    /// ``Turns/next(until:)``, and must make that other wait return.
    public init(name: String, threads: Int = 1, maxBatch: Int = .max, limit: Limit? = nil, interrupt: (@Sendable () -> Void)? = nil) {
        self.name = name
        self.threads = max(1, threads)
        self.maxBatch = max(1, maxBatch)
        self.limit = limit
        self.interrupt = interrupt
    }

    /// Starts the threads, each running `body` once with its own ``Turns``. Called once; a
    /// worker stopped before it started never starts (and its queued jobs never run).
    public func start(_ body: @escaping @Sendable (Turns) -> Void) {
        let count = shared.withLock { shared -> Int in
            guard !shared.started, !shared.stopping else { return 0 }
            shared.started = true
            shared.running = threads
            return threads
        }
        for index in 0..<count {
            let name = count == 1 ? self.name : "\(self.name)-\(index)"
            // The thread holds the worker (and what `body` holds) until it ends.
            let thread = Thread { [self] in
                nameCurrentThread(name)
                let turns = Turns(self)
                body(turns)
                ended(holding: turns.leave())
            }
            thread.name = name
            thread.start()
        }
    }

    /// Queues `job` and wakes a thread for it. False when it was not queued: the worker stops,
    /// or its ``Limit`` refuses new jobs while it is full (the job is then counted in ``dropped``).
    @discardableResult
    public func submit(_ job: Job) -> Bool {
        let (queued, sleeper) = shared.withLock { shared -> (Bool, DispatchSemaphore?) in
            guard !shared.stopping, shared.admit(job, under: limit) else { return (false, nil) }
            return (true, shared.sleepers.popLast())
        }
        if queued { rouse(sleeper) }
        return queued
    }

    /// Has a thread take a turn soon even with no job: at once if one sleeps, else when it next
    /// asks for one. Wake-ups that come before it does are one turn.
    public func wake() {
        let sleeper = shared.withLock { shared -> DispatchSemaphore? in
            shared.woken = true
            return shared.sleepers.popLast()
        }
        rouse(sleeper)
    }

    /// Jobs queued, and jobs the threads took and have not finished.
    public var pending: Int { shared.withLock { $0.queue.count + $0.inHand } }

    /// Jobs (by their ``Limit`` weight) dropped so far because the queue was full.
    public var dropped: Int { shared.withLock { $0.dropped } }

    /// Blocks until every job submitted so far is done: the queue is empty and no thread is in
    /// a turn that had jobs. Not from the worker's own threads.
    public func flush() {
        shared.wait { $0.queue.isEmpty && $0.inHand == 0 }
    }

    /// Refuses new jobs and lets the threads work through every job queued; returns once they
    /// have ended. Not from the worker's own threads.
    public func stop() {
        _ = beginStopping(takingQueued: false)
        shared.wait { $0.running == 0 }
    }

    /// Refuses new jobs and takes the queued ones away from the threads, handing them to
    /// `refuse` (at once, on the calling thread); returns once the threads have finished the
    /// turn they are in and ended. Not from the worker's own threads.
    public func stop(refusingQueued refuse: ([Job]) -> Void) {
        refuse(beginStopping(takingQueued: true))
        shared.wait { $0.running == 0 }
    }

    /// Refuses new jobs from now on and wakes every thread wherever it waits; returns the jobs
    /// taken out of the queue.
    private func beginStopping(takingQueued: Bool) -> [Job] {
        let (queued, sleepers) = shared.withLock { shared -> ([Job], [DispatchSemaphore]) in
            shared.stopping = true
            var queued: [Job] = []
            if takingQueued {
                swap(&queued, &shared.queue)
                shared.clearQueue()
            }
            // Asleep threads, and those in flush() if the worker is idle now.
            defer { shared.sleepers.removeAll() }
            return (queued, shared.sleepers + (shared.isIdle ? shared.takeWaiters() : []))
        }
        for sleeper in sleepers { sleeper.signal() }
        interrupt?()
        return queued
    }

    /// Wakes `sleeper`, or when no thread sleeps, interrupts the thread where else it waits.
    private func rouse(_ sleeper: DispatchSemaphore?) {
        if let sleeper { sleeper.signal() } else { interrupt?() }
    }

    /// A thread's body returned, with the jobs of its last turn if it did not ask for another.
    private func ended(holding jobs: Int) {
        let waiters = shared.withLock { shared in
            shared.inHand -= jobs
            shared.running -= 1
            return shared.takeWaiters()
        }
        for waiter in waiters { waiter.signal() }
    }
}
