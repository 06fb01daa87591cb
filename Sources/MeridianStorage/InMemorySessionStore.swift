import MeridianCore
import MeridianSync

/// A store in memory, for unit tests and servers run without a data directory.
///
/// It enforces fencing numbers (see ``SessionChange``) as a shared database does, although
/// one process never has two owners of a session: it is the reference the fencing contract
/// tests run against without a database, and the store the writer's tests fence off.
/// Changes without a fence (a single node) are never refused.
public final class InMemorySessionStore: SessionStore {
    private let sessions = Locked<[String: (header: SessionUpdate, annotations: [String: Annotation], histories: [ParticipantID: UndoHistory])]>([:])

    /// An empty store.
    public init() {}

    /// The session as last committed, with its stored fence; nil if none is stored.
    public func load(_ id: String) throws(StorageError) -> StoredSession? {
        sessions.withLock { Self.stored(id, in: $0) }
    }

    /// Whether `id` is stored.
    public func contains(_ id: String) throws(StorageError) -> Bool {
        sessions.withLock { $0[id] != nil }
    }

    /// As a shared database does: `fence` becomes the stored one (when above it) as the session
    /// is read; the session comes back with the fence stored before.
    public func load(_ id: String, claiming fence: UInt64) throws(StorageError) -> StoredSession? {
        sessions.withLock { all in
            let loaded = Self.stored(id, in: all)
            if let before = all[id]?.header.fence, before < fence { all[id]!.header.fence = fence }
            return loaded
        }
    }

    private static func stored(_ id: String, in all: [String: (header: SessionUpdate, annotations: [String: Annotation], histories: [ParticipantID: UndoHistory])]) -> StoredSession? {
        guard let s = all[id] else { return nil }
        let annotations = s.annotations.values.sorted { ($0.zIndex, $0.id) < ($1.zIndex, $1.id) }
        let record = SessionRecord(id: id, settings: s.header.settings, annotations: annotations,
                                   callout: s.header.callout, seq: s.header.seq, histories: s.histories)
        return StoredSession(record: record, epoch: s.header.epoch, fence: s.header.fence ?? 0)
    }

    /// A summary of every stored session, sorted by id.
    public func list() throws(StorageError) -> [StoredSessionSummary] {
        sessions.withLock { all in
            all.keys.sorted().map { StoredSessionSummary(id: $0, seq: all[$0]!.header.seq, annotationCount: all[$0]!.annotations.count) }
        }
    }

    /// Applies the changes in order, all or none: a change whose fence is below its session's
    /// stored one refuses the whole commit before anything is applied.
    public func commit(_ changes: [SessionChange]) throws(StorageError) {
        try sessions.withLock { all throws(StorageError) in
            // Every fence is checked before anything is applied: a refused commit leaves no trace.
            try Self.checkFences(changes, stored: { all[$0].map { $0.header.fence ?? 0 } })
            for change in changes {
                switch change {
                case .delete(let id, _):
                    all[id] = nil
                case .update(let u):
                    var header = u
                    header.upserted = []
                    header.removed = []
                    header.histories = [:]
                    // A change without a fence keeps the stored one.
                    header.fence = u.fence ?? all[u.id]?.header.fence ?? 0
                    if u.replacesAnnotations || all[u.id] == nil { all[u.id] = (header, [:], [:]) }
                    // Mutated in place: no copy of a large session's annotations per change.
                    all[u.id]!.header = header
                    for id in u.removed { all[u.id]!.annotations[id] = nil }
                    for a in u.upserted { all[u.id]!.annotations[a.id] = a }
                    for (pid, history) in u.histories { all[u.id]!.histories[pid] = history }
                }
            }
        }
    }

    /// Throws ``StorageError/fenced(session:stored:offered:)`` for the first change whose fence is
    /// below its session's fence at that point of the commit; `stored` gives the fence of a stored
    /// session (nil: none stored).
    static func checkFences(_ changes: [SessionChange], stored: (String) -> UInt64?) throws(StorageError) {
        // The fence of each session the commit has touched so far, nil once it is deleted.
        var current: [String: UInt64?] = [:]
        for change in changes {
            let id = change.sessionID
            let before = current[id] ?? stored(id)
            if let offered = change.fence, let before, before > offered {
                throw .fenced(session: id, stored: before, offered: offered)
            }
            switch change {
            case .delete: current[id] = .some(nil)
            case .update(let u): current[id] = .some(u.fence ?? before ?? 0)
            }
        }
    }
}
