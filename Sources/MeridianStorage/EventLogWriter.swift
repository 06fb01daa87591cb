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
public final class EventLogWriter: @unchecked Sendable {
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
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var queue: [Item] = []
    private var queued = 0
    private var inFlight = false
    private var stopping = false
    private var running = true
    private var droppedCount = 0

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
    public var dropped: Int {
        condition.lock()
        defer { condition.unlock() }
        return droppedCount
    }

    private func enqueue(_ item: Item) {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else { return }
        queue.append(item)
        queued += item.count
        while queued > maxPending, queue.count > 1 {
            let old = queue.removeFirst()
            queued -= old.count
            droppedCount += old.count
        }
        condition.signal()
    }

    /// Blocks until everything queued so far is written.
    public func flush() {
        condition.lock()
        defer { condition.unlock() }
        while !queue.isEmpty || inFlight { condition.wait() }
    }

    /// Writes what is queued, then ends the thread.
    public func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while running { condition.wait() }
        condition.unlock()
    }

    private func run() {
        Self.yieldToLatencyCriticalThreads()
        var nextAgePrune = ContinuousClock.now
        var sinceCountPrune: [String: Int] = [:]
        var droppedReported = 0
        let countSlack = max(1, retention.maxEntries / 10)
        while true {
            condition.lock()
            while queue.isEmpty && !stopping && ContinuousClock.now < nextAgePrune {
                _ = condition.wait(until: Date(timeIntervalSinceNow: Self.seconds(nextAgePrune - ContinuousClock.now)))
            }
            if queue.isEmpty && stopping {
                running = false
                condition.broadcast()
                condition.unlock()
                return
            }
            let batch = queue
            queue.removeAll(keepingCapacity: true)
            queued = 0
            inFlight = true
            let dropped = droppedCount
            condition.unlock()
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
            }

            condition.lock()
            inFlight = false
            condition.broadcast()
            condition.unlock()
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
