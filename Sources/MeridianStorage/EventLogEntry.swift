import Foundation

/// One row of a session's event log: a discrete event as its members received
/// it, or a checkpoint (the session's snapshot) that a replay starts from.
public struct EventLogEntry: Hashable, Sendable {
    public enum Kind: Int, Hashable, Sendable {
        case event = 0
        /// `body` is a snapshot (as in `welcome.snapshot`) at `seq`.
        case checkpoint = 1
    }

    /// The log's own order: increasing within a session, never reused (a
    /// session's seq may repeat after a crash, the position does not). Assigned
    /// by the store when the entry is appended; 0 before.
    public var position: Int64
    public var session: String
    public var epoch: String
    /// The event's seq (a checkpoint: the seq it reflects).
    public var seq: UInt64
    /// Wall-clock time the server applied the event, in milliseconds since 1970 (UTC).
    public var timeMs: Int64
    public var kind: Kind
    /// The JSON object: the event (Protocol v1) or the snapshot.
    public var body: [UInt8]

    public init(position: Int64 = 0, session: String, epoch: String, seq: UInt64, timeMs: Int64, kind: Kind, body: [UInt8]) {
        self.position = position
        self.session = session
        self.epoch = epoch
        self.seq = seq
        self.timeMs = timeMs
        self.kind = kind
        self.body = body
    }
}

/// How much of each session's log is kept: entries older than `maxAge` and all
/// but the newest `maxEntries` of a session are removed.
public struct EventLogRetention: Hashable, Sendable {
    public var maxAge: Duration
    public var maxEntries: Int

    public init(maxAge: Duration = .seconds(7 * 24 * 3600), maxEntries: Int = 10_000) {
        self.maxAge = maxAge
        self.maxEntries = maxEntries
    }

    /// The oldest time (ms since 1970) kept at `nowMs`.
    public func cutoff(nowMs: Int64) -> Int64 {
        let (seconds, atto) = maxAge.components
        return nowMs - (seconds * 1000 + atto / 1_000_000_000_000_000)
    }
}

/// Where event logs are kept: ``SQLiteEventLogStore`` beside the session store,
/// ``InMemoryEventLogStore`` without a data directory.
public protocol EventLogStore: Sendable {
    /// Appends in order, assigning positions; all or none.
    func append(_ entries: [EventLogEntry]) throws(StorageError) -> [EventLogEntry]
    /// Up to `limit` entries of `session` with a position above `after`, oldest first.
    func entries(of session: String, after: Int64, limit: Int) throws(StorageError) -> [EventLogEntry]
    /// Removes what `retention` no longer keeps at `nowMs`: by age everywhere,
    /// by count in `sessions`. Returns how many entries were removed.
    func prune(_ retention: EventLogRetention, nowMs: Int64, sessions: Set<String>) throws(StorageError) -> Int
    /// Removes a session's whole log (the session was deleted).
    func remove(session: String) throws(StorageError)
}
