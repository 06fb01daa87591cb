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

    /// The store the log entries are appended to, and pruned in.
    public let store: any EventLogStore
    /// What the writer's prunes keep of each session's log.
    public let retention: EventLogRetention
    private let pruneInterval: Duration
    private let onError: @Sendable (StorageError) -> Void
    private let onDropped: @Sendable (Int) -> Void
    private let worker: WorkerThread<Item>

    /// `onError` is told of failed writes, `onDropped` of entries dropped since it was last told
    /// (both on the writer's thread).
    public init(store: any EventLogStore, retention: EventLogRetention, maxPending: Int = 100_000, pruneInterval: Duration = .seconds(60),
                onError: @escaping @Sendable (StorageError) -> Void = { _ in }, onDropped: @escaping @Sendable (Int) -> Void = { _ in }) {
        self.store = store
        self.retention = retention
        self.pruneInterval = pruneInterval
        self.onError = onError
        self.onDropped = onDropped
        // Oldest first out: what a full queue gives up is the log's past, not what just happened.
        worker = WorkerThread(name: "event-log", limit: .init(capacity: maxPending, whenFull: .dropOldest) { $0.count })
        // The thread keeps the writer alive until `stop()` ends it.
        worker.start { turns in self.run(turns) }
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
    public var dropped: Int { worker.dropped }

    private func enqueue(_ item: Item) {
        worker.submit(item)
    }

    /// Blocks until everything queued so far is written.
    public func flush() {
        worker.flush()
    }

    /// Writes what is queued, then ends the thread.
    public func stop() {
        worker.stop()
    }

    /// How long a failed write or prune waits before the store is asked again.
    public static let retryAfterFailure: Duration = .seconds(1)

    /// The writer thread: each turn writes what was queued and prunes what is due; a turn
    /// comes when items are queued or the next age prune is due.
    private func run(_ turns: WorkerThread<Item>.Turns) {
        Self.yieldToLatencyCriticalThreads()
        var nextAgePrune = ContinuousClock.now
        var sinceCountPrune: [String: Int] = [:]
        let countSlack = max(1, retention.maxEntries / 10)
        while let turn = turns.next(until: nextAgePrune) {
            let batch = turn.jobs
            if turn.dropped > 0 { onDropped(turn.dropped) }

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

    /// Milliseconds since 1970, now, rounded (the wall clock read directly: this is asked with
    /// every broadcast, and `Date()` costs a microsecond or more).
    public static func nowMs() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1000 + (Int64(now.tv_nsec) + 500_000) / 1_000_000
    }
}
