import MeridianStorage

/// Where and how sessions are kept.
public struct StorageConfiguration: Sendable {
    /// Directory of the SQLite store; nil keeps sessions in memory only
    /// (they survive unloading, not a restart).
    public var dataDirectory: String?
    /// Another engine behind the ``SessionStore`` seam; when set it is used
    /// instead of `dataDirectory`, with the same group-committing writer.
    public var store: (any SessionStore)?
    /// The event log beside `store` (PostgreSQL's, shared by a cluster's nodes); without it the
    /// log is SQLite beside `dataDirectory`'s sessions, or memory.
    public var eventLogStore: (any EventLogStore)?
    /// A session with no members is unloaded from memory after this long.
    public var idleUnloadAfter: Duration
    /// Most sessions in memory at once. When full, the longest-idle empty
    /// session is unloaded; if there is none, a join is refused with
    /// `capacity_exceeded`.
    public var maxLoadedSessions: Int
    /// Most changes in one storage transaction.
    public var maxBatch: Int
    /// Threads reading from the store (loading sessions, the HTTP API's reads), so
    /// that the service thread never waits for the disk. SQLite serves them
    /// concurrently in WAL mode.
    public var readers = 4

    /// A configuration with the given directory (nil: memory), idle-unload delay, session cap and batch size; no other store, four readers.
    public init(dataDirectory: String? = nil, idleUnloadAfter: Duration = .seconds(300), maxLoadedSessions: Int = 10_000, maxBatch: Int = 1_024) {
        self.dataDirectory = dataDirectory
        self.idleUnloadAfter = idleUnloadAfter
        self.maxLoadedSessions = maxLoadedSessions
        self.maxBatch = maxBatch
    }
}
