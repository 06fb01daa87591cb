import MeridianStorage

/// Each session's persisted event log: what is kept, and how often a replay
/// checkpoint (the session's snapshot) is written.
public struct EventLogConfiguration: Sendable {
    /// Entries older than `retention.maxAge`, and all but a session's newest
    /// `retention.maxEntries`, are removed. `maxEntries` 0 turns the log off.
    public var retention: EventLogRetention
    /// A checkpoint follows the first event a session logs after it is loaded,
    /// then every `checkpointEvery` events (at least as many as it has annotations,
    /// so a large session's snapshots do not crowd its log).
    public var checkpointEvery: Int

    /// A configuration with the given retention (by default 7 days and 10,000 entries per session) and a checkpoint every `checkpointEvery` events.
    public init(retention: EventLogRetention = EventLogRetention(), checkpointEvery: Int = 500) {
        self.retention = retention
        self.checkpointEvery = checkpointEvery
    }

    /// Whether the log is kept at all (`retention.maxEntries` above 0).
    public var isEnabled: Bool { retention.maxEntries > 0 }
}
