/// Which of a session's log entries a page holds, and in which order: positions strictly
/// between `after` and `before`, times from `since` up to (not including) `until`.
public struct EventLogRange: Hashable, Sendable {
    /// Entries with a position above this one (0: from the oldest kept).
    public var after: Int64
    /// Entries with a position below this one (`Int64.max`: up to the newest).
    public var before: Int64
    /// Entries at or after this time, in ms since 1970.
    public var since: Int64
    /// Entries before this time, in ms since 1970.
    public var until: Int64
    /// Newest first (descending positions) instead of oldest first.
    public var newestFirst: Bool

    /// The range of every entry, oldest first, narrowed by the arguments given.
    public init(after: Int64 = 0, before: Int64 = .max, since: Int64 = .min, until: Int64 = .max, newestFirst: Bool = false) {
        self.after = after
        self.before = before
        self.since = since
        self.until = until
        self.newestFirst = newestFirst
    }

    /// Whether `entry` lies in the range (order aside).
    public func contains(_ entry: EventLogEntry) -> Bool {
        entry.position > after && entry.position < before && entry.timeMs >= since && entry.timeMs < until
    }
}

extension EventLogStore {
    /// Up to `limit` entries of `session` with a position above `after`, oldest first.
    public func entries(of session: String, after: Int64, limit: Int) throws(StorageError) -> [EventLogEntry] {
        try entries(of: session, in: EventLogRange(after: after), limit: limit)
    }
}
