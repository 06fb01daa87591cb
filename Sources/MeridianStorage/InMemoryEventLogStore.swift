import MeridianSync

/// Event logs in memory, for servers without a data directory and for tests.
/// Besides the retention, all logs together keep at most `maxEntries`: beyond
/// it the oldest entries (of whichever session has them) go first.
public final class InMemoryEventLogStore: EventLogStore {
    private struct State {
        var logs: [String: [EventLogEntry]] = [:]
        var lastPosition: Int64 = 0
        var count = 0
    }
    private let state = Locked(State())
    /// Most entries kept over all sessions together; beyond it the oldest go first.
    public let maxEntries: Int

    /// An empty store that keeps at most `maxEntries` entries in all (default a million).
    public init(maxEntries: Int = 1_000_000) {
        self.maxEntries = maxEntries
    }

    /// Appends in order, giving each entry the next position, then drops the oldest entries
    /// over ``maxEntries``. Never throws.
    public func append(_ entries: [EventLogEntry]) throws(StorageError) -> [EventLogEntry] {
        state.withLock { s in
            let appended = entries.map { entry in
                var e = entry
                s.lastPosition += 1
                e.position = s.lastPosition
                s.logs[e.session, default: []].append(e)
                return e
            }
            s.count += appended.count
            while s.count > maxEntries, let (id, log) = s.logs.min(by: { $0.value[0].position < $1.value[0].position }) {
                // Positions are global: the session whose first entry is lowest holds the oldest one.
                let drop = min(log.count, max(1, s.count - maxEntries))
                s.logs[id] = drop == log.count ? nil : Array(log.dropFirst(drop))
                s.count -= drop
            }
            return appended
        }
    }

    /// Up to `limit` entries of `session` in `range`, in its order.
    public func entries(of session: String, in range: EventLogRange, limit: Int) throws(StorageError) -> [EventLogEntry] {
        state.withLock { s in
            guard let log = s.logs[session] else { return [] }
            // Positions increase along the array: binary search for the ends of the positions asked
            // for (none when `before` is not above `after`).
            let low = Self.firstIndex(in: log) { $0 > range.after }
            let window = log[low..<max(low, Self.firstIndex(in: log) { $0 >= range.before })]
            return range.newestFirst ? Array(window.reversed().lazy.filter(range.contains).prefix(max(0, limit)))
                                     : Array(window.lazy.filter(range.contains).prefix(max(0, limit)))
        }
    }

    /// The index of the first entry of `log` whose position satisfies `holds` (false, then true, along the log).
    private static func firstIndex(in log: [EventLogEntry], where holds: (Int64) -> Bool) -> Int {
        var low = 0, high = log.count
        while low < high {
            let mid = (low + high) / 2
            if holds(log[mid].position) { high = mid } else { low = mid + 1 }
        }
        return low
    }

    /// Removes the entries older than `retention`'s cutoff at `nowMs` from every log, and those
    /// beyond the newest `retention.maxEntries` from the logs of `sessions`; returns how many went.
    public func prune(_ retention: EventLogRetention, nowMs: Int64, sessions: Set<String>) throws(StorageError) -> Int {
        let cutoff = retention.cutoff(nowMs: nowMs)
        return state.withLock { s in
            var removed = 0
            for id in Array(s.logs.keys) {
                var log = s.logs[id]!
                let before = log.count
                log.removeAll { $0.timeMs < cutoff }
                if sessions.contains(id), log.count > retention.maxEntries { log.removeFirst(log.count - retention.maxEntries) }
                removed += before - log.count
                s.logs[id] = log.isEmpty ? nil : log
            }
            s.count -= removed
            return removed
        }
    }

    /// Removes `session`'s whole log.
    public func remove(session: String) throws(StorageError) {
        state.withLock { s in s.count -= s.logs.removeValue(forKey: session)?.count ?? 0 }
    }
}
