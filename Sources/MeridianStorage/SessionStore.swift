import MeridianCore

/// Where sessions are kept between restarts: the seam between the server and
/// a storage engine. The embedded default is ``SQLiteSessionStore``;
/// ``InMemorySessionStore`` serves unit tests; `PostgresSessionStore` (target
/// MeridianPostgres) is shared by the nodes of a cluster, behind the same
/// protocol, without touching the session core.
public protocol SessionStore: Sendable {
    /// The stored session, or nil if there is none.
    func load(_ id: String) throws(StorageError) -> StoredSession?
    /// Whether a session of `id` is stored (and not deleted), without reading its annotations.
    func contains(_ id: String) throws(StorageError) -> Bool
    /// The stored session for a new owner with fencing number `fence`, with the fence stored
    /// before this claim (see the extension).
    func load(_ id: String, claiming fence: UInt64) throws(StorageError) -> StoredSession?
    /// Every stored session, by id.
    func list() throws(StorageError) -> [StoredSessionSummary]
    /// Applies the changes in order, all or none (one transaction). A store that enforces
    /// fencing numbers refuses the whole commit with ``StorageError/fenced(session:stored:offered:)``
    /// when a change's fence is below its session's stored one (see ``SessionChange``).
    func commit(_ changes: [SessionChange]) throws(StorageError)
    /// Whether the store answers now (a round trip to a database server), for readiness after a
    /// failure. Stores in this process always do.
    func probe() throws(StorageError)
}

extension SessionStore {
    /// Stores in this process always answer: does nothing.
    public func probe() throws(StorageError) {}

    /// Whether `load` finds the session: for stores without a cheaper question to ask.
    public func contains(_ id: String) throws(StorageError) -> Bool {
        try load(id) != nil
    }

    /// Loads the session for a new owner whose fencing number is `fence`. A store that fences
    /// makes `fence` the stored one (when above it) in the same transaction as the read, so that
    /// a commit of a former owner still in flight is either read here or refused afterwards.
    /// The session comes back with the fence stored *before* the claim: the new owner's lease
    /// is behind it when that one is not below `fence` (the lease counter was lost), and must be
    /// moved past it. Stores that do not fence just load.
    public func load(_ id: String, claiming fence: UInt64) throws(StorageError) -> StoredSession? {
        try load(id)
    }
}

/// A session as stored: its durable record and the epoch of its last life.
public struct StoredSession: Hashable, Sendable {
    /// The session's durable state: settings, annotations, callout, seq and undo histories.
    public var record: SessionRecord
    /// The epoch of the session's last life; a session loaded from storage gets a new one.
    public var epoch: String
    /// The fencing number of the last fenced write (0: none; stores that do not fence).
    public var fence: UInt64
    /// A stored session; `fence` 0 for a store that does not fence.
    public init(record: SessionRecord, epoch: String, fence: UInt64 = 0) {
        self.record = record
        self.epoch = epoch
        self.fence = fence
    }
}

/// A stored session as a store's ``SessionStore/list()`` gives it: id, seq and annotation count.
public struct StoredSessionSummary: Hashable, Sendable {
    /// The id the session is stored under.
    public var id: String
    /// The seq of the session's last stored change.
    public var seq: UInt64
    /// How many annotations the stored session holds.
    public var annotationCount: Int
    /// When the store last wrote the session, in ms since 1970 UTC (the time of its last durable
    /// change); nil from a store that keeps no such time (the in-memory one).
    public var writtenMs: Int64?
    /// A summary of session `id` at `seq`, holding `annotationCount` annotations, last written at
    /// `writtenMs`.
    public init(id: String, seq: UInt64, annotationCount: Int, writtenMs: Int64? = nil) {
        self.id = id
        self.seq = seq
        self.annotationCount = annotationCount
        self.writtenMs = writtenMs
    }
}
