import Synchronization

/// Event logs in memory, for servers without a data directory and for tests.
public final class InMemoryEventLogStore: EventLogStore {
    private struct State {
        var logs: [String: [EventLogEntry]] = [:]
        var lastPosition: Int64 = 0
    }
    private let state = Mutex(State())

    public init() {}

    public func append(_ entries: [EventLogEntry]) throws(StorageError) -> [EventLogEntry] {
        state.withLock { s in
            entries.map { entry in
                var e = entry
                s.lastPosition += 1
                e.position = s.lastPosition
                s.logs[e.session, default: []].append(e)
                return e
            }
        }
    }

    public func entries(of session: String, after: Int64, limit: Int) throws(StorageError) -> [EventLogEntry] {
        state.withLock { s in
            guard let log = s.logs[session] else { return [] }
            // Positions increase along the array: binary search for the first one after `after`.
            var low = 0, high = log.count
            while low < high {
                let mid = (low + high) / 2
                if log[mid].position <= after { low = mid + 1 } else { high = mid }
            }
            return Array(log[low..<min(log.count, low + max(0, limit))])
        }
    }

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
            return removed
        }
    }

    public func remove(session: String) throws(StorageError) {
        state.withLock { _ = $0.logs.removeValue(forKey: session) }
    }
}
