import MeridianSync
import Foundation
import MeridianCore
import MeridianProtocol

/// Writes event logs on a thread of its own. The server's service thread only
/// queues what happened (`record`, `checkpoint`: a lock and an append); this
/// thread encodes the events, appends them in batches and applies retention.
///
/// The queue is bounded: if the store falls behind by more than `maxPending`
/// items, the oldest are dropped (and counted) rather than blocking the server.
/// Log rows are not acknowledged to anyone: a crash loses what was still queued.
public final class EventLogWriter: Sendable {
    enum Item {
        case events(session: String, epoch: String, timeMs: Int64, [Emitted])
        case checkpoint(Session, timeMs: Int64)
        case remove(session: String)

        var count: Int {
            switch self {
            case .events(_, _, _, let events): events.count
            case .checkpoint, .remove: 1
            }
        }
    }

    public let store: any EventLogStore
    public let retention: EventLogRetention
    private let maxPending: Int
    private let pruneInterval: Duration
    private let onError: @Sendable (StorageError) -> Void
    private let onDropped: @Sendable (Int) -> Void
    /// What the writer thread shares with the threads that queue, flush and stop.
    private struct State: Awaitable {
        var queue: [Item] = []
        var queued = 0
        var inFlight = false
        var stopping = false
        var running = true
        var droppedCount = 0
        /// The writer thread waits on `wake` (until its next prune at the latest): the next to
        /// give it work clears this and signals, once.
        var sleeping = false
        /// Threads in ``flush()`` or ``stop()``, woken whenever the writer goes idle or ends
        /// (each then looks again at what it waits for).
        var waiters: [DispatchSemaphore] = []

        var isIdle: Bool { queue.isEmpty && !inFlight }

        /// Clears `sleeping`; true if it was set, when the caller must signal `wake`.
        mutating func takeSleeping() -> Bool {
            defer { sleeping = false }
            return sleeping
        }

        mutating func takeWaiters() -> [DispatchSemaphore] {
            defer { waiters.removeAll() }
            return waiters
        }
    }

    private let state = Locked(State())
    private let wake = DispatchSemaphore(value: 0)

    /// `onError` is told of failed writes, `onDropped` of entries dropped since it was last told
    /// (both on the writer's thread).
    public init(store: any EventLogStore, retention: EventLogRetention, maxPending: Int = 100_000, pruneInterval: Duration = .seconds(60),
                onError: @escaping @Sendable (StorageError) -> Void = { _ in }, onDropped: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.store = store
        self.retention = retention
        self.maxPending = maxPending
        self.pruneInterval = pruneInterval
        self.onError = onError
        self.onDropped = onDropped
        let thread = Thread { self.run() }
        thread.name = "meridian-event-log"
        thread.start()
    }

    /// Queues the discrete events among `events`, applied at `timeMs` (ms since 1970).
    public func record(session: String, epoch: String, timeMs: Int64, _ events: [Emitted]) {
        let discrete = events.filter { !$0.isTransient }
        guard !discrete.isEmpty else { return }
        enqueue(.events(session: session, epoch: epoch, timeMs: timeMs, discrete))
    }

    /// Queues a checkpoint: the session as it is now (a copy; encoded on the writer's thread).
    public func checkpoint(_ session: Session, timeMs: Int64) {
        enqueue(.checkpoint(session, timeMs: timeMs))
    }

    /// Queues the removal of a session's whole log (after what is queued before it).
    public func forget(session: String) {
        enqueue(.remove(session: session))
    }

    /// Items dropped because the store fell behind.
    public var dropped: Int { state.withLock { $0.droppedCount } }

    private func enqueue(_ item: Item) {
        let wakeWriter = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.queue.append(item)
            state.queued += item.count
            while state.queued > maxPending, state.queue.count > 1 {
                let old = state.queue.removeFirst()
                state.queued -= old.count
                state.droppedCount += old.count
            }
            return state.takeSleeping()
        }
        if wakeWriter { wake.signal() }
    }

    /// Blocks until everything queued so far is written.
    public func flush() {
        state.wait { $0.isIdle }
    }

    /// Writes what is queued, then ends the thread.
    public func stop() {
        let sleeping = state.withLock { state in
            state.stopping = true
            return state.takeSleeping()
        }
        if sleeping { wake.signal() }
        state.wait { !$0.running }
    }

    private enum Step {
        case sleep
        case end([DispatchSemaphore])
        case write([Item], dropped: Int)
    }

    /// Sleeps until woken or until `deadline`. A wake-up that raced the timeout is taken, so
    /// the next sleep does not end early.
    private func sleep(until deadline: ContinuousClock.Instant) {
        let timeout = DispatchTime.now() + Self.seconds(deadline - ContinuousClock.now)
        guard wake.wait(timeout: timeout) == .timedOut else { return }
        let signalled = state.withLock { !$0.takeSleeping() }
        if signalled { wake.wait() }
    }

    /// How long a failed write or prune waits before the store is asked again.
    public static let retryAfterFailure: Duration = .seconds(1)

    private func run() {
        Self.yieldToLatencyCriticalThreads()
        var nextAgePrune = ContinuousClock.now
        var sinceCountPrune: [String: Int] = [:]
        var droppedReported = 0
        let countSlack = max(1, retention.maxEntries / 10)
        while true {
            let step = state.withLock { state -> Step in
                if state.queue.isEmpty && !state.stopping && ContinuousClock.now < nextAgePrune {
                    state.sleeping = true
                    return .sleep
                }
                if state.queue.isEmpty && state.stopping {
                    state.running = false
                    return .end(state.takeWaiters())
                }
                let batch = state.queue
                state.queue.removeAll(keepingCapacity: true)
                state.queued = 0
                state.inFlight = true
                return .write(batch, dropped: state.droppedCount)
            }
            let batch: [Item], dropped: Int
            switch step {
            case .sleep:
                sleep(until: nextAgePrune)
                continue
            case .end(let waiters):
                for waiter in waiters { waiter.signal() }
                return
            case .write(let items, let count):
                (batch, dropped) = (items, count)
            }
            if dropped > droppedReported {
                onDropped(dropped - droppedReported)
                droppedReported = dropped
            }

            do throws(StorageError) {
                var entries: [EventLogEntry] = []
                for item in batch {
                    if case .remove(let session) = item {
                        _ = try store.append(entries)
                        entries.removeAll()
                        try store.remove(session: session)
                    } else {
                        entries.append(contentsOf: Self.entries(item))
                    }
                }
                _ = try store.append(entries)
                for item in batch { if case .events(let session, _, _, let events) = item { sinceCountPrune[session, default: 0] += events.count } }
                let due = Set(sinceCountPrune.filter { $0.value >= countSlack }.keys)
                let now = ContinuousClock.now
                if !due.isEmpty || now >= nextAgePrune {
                    _ = try store.prune(retention, nowMs: Self.nowMs(), sessions: due)
                    for id in due { sinceCountPrune[id] = nil }
                    if now >= nextAgePrune { nextAgePrune = now + pruneInterval }
                }
            } catch {
                onError(error)
                // A store that fails (a PostgreSQL out of reach) is asked again in a second, not
                // at once: an age prune that is due would otherwise be retried in a busy loop.
                nextAgePrune = max(nextAgePrune, ContinuousClock.now + Self.retryAfterFailure)
            }

            let waiters = state.withLock { state in
                state.inFlight = false
                return state.isIdle ? state.takeWaiters() : []
            }
            for waiter in waiters { waiter.signal() }
        }
    }

    private static func entries(_ item: Item) -> [EventLogEntry] {
        switch item {
        case .events(let session, let epoch, let timeMs, let events):
            events.map { EventLogEntry(session: session, epoch: epoch, seq: $0.seq, timeMs: timeMs, kind: .event, body: ServerMessage.event($0)) }
        case .checkpoint(let s, let timeMs):
            [EventLogEntry(session: s.id, epoch: s.epoch, seq: s.seq, timeMs: timeMs, kind: .checkpoint, body: ServerMessage.snapshotJSON(s))]
        case .remove:
            []
        }
    }

    /// The log is written in the background: on a busy host its thread runs at a lower priority
    /// (nice 10) than the service thread, so encoding a large session's checkpoint does not
    /// delay the server's replies. (Linux keeps a nice value per thread: `who` 0 is this thread.)
    private static func yieldToLatencyCriticalThreads() {
        #if os(Linux)
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        #endif
    }

    /// Milliseconds since 1970, now.
    public static func nowMs() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    private static func seconds(_ d: Duration) -> Double {
        let (s, atto) = d.components
        return max(0.001, Double(s) + Double(atto) / 1e18)
    }
}
