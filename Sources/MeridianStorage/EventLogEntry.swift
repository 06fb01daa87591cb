import Foundation

/// One row of a session's event log: a discrete event as its members received
/// it, or a checkpoint (the session's snapshot) that a replay starts from.
public struct EventLogEntry: Hashable, Sendable {
    /// What an entry's `body` holds: one discrete event, or a checkpoint snapshot.
    public enum Kind: Int, Hashable, Sendable {
        /// `body` is one discrete event (SPEC §4.1), encoded as the members received it.
        case event = 0
        /// `body` is a snapshot (as in `welcome.snapshot`) at `seq`.
        case checkpoint = 1
    }

    /// The log's own order: increasing within a session, never reused (a
    /// session's seq may repeat after a crash, the position does not). Assigned
    /// by the store when the entry is appended; 0 before.
    public var position: Int64
    /// The id of the session whose log holds the entry.
    public var session: String
    /// The session's epoch when the entry was made (SPEC §3): its `seq` means something only with it.
    public var epoch: String
    /// The event's seq (a checkpoint: the seq it reflects).
    public var seq: UInt64
    /// Wall-clock time the server applied the event, in milliseconds since 1970 (UTC).
    public var timeMs: Int64
    /// Whether `body` is an event or a checkpoint snapshot.
    public var kind: Kind
    /// The JSON object: the event (Protocol v1) or the snapshot.
    public var body: [UInt8]

    /// An entry as the log keeps it; `position` stays 0 until a store appends the entry.
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
    /// Entries older than this are removed, in every session's log (default a week).
    public var maxAge: Duration
    /// Most entries kept of one session's log: beyond it its oldest are removed (default 10 000).
    public var maxEntries: Int

    /// A retention of `maxAge` (default 7 days) and `maxEntries` per session (default 10 000).
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
    /// Up to `limit` entries of `session` in `range`, in its order (the first `limit` of it).
    func entries(of session: String, in range: EventLogRange, limit: Int) throws(StorageError) -> [EventLogEntry]
    /// Removes what `retention` no longer keeps at `nowMs`: by age everywhere,
    /// by count in `sessions`. Returns how many entries were removed.
    func prune(_ retention: EventLogRetention, nowMs: Int64, sessions: Set<String>) throws(StorageError) -> Int
    /// Removes a session's whole log (the session was deleted).
    func remove(session: String) throws(StorageError)
}
