import MeridianCore
import MeridianSync

/// A store in memory, for unit tests and servers run without a data directory.
public final class InMemorySessionStore: SessionStore {
    private let sessions = Locked<[String: (header: SessionUpdate, annotations: [String: Annotation])]>([:])

    public init() {}

    public func load(_ id: String) throws(StorageError) -> StoredSession? {
        sessions.withLock { all in
            guard let s = all[id] else { return nil }
            let annotations = s.annotations.values.sorted { ($0.zIndex, $0.id) < ($1.zIndex, $1.id) }
            let record = SessionRecord(id: id, settings: s.header.settings, annotations: annotations,
                                       callout: s.header.callout, seq: s.header.seq)
            return StoredSession(record: record, epoch: s.header.epoch)
        }
    }

    public func list() throws(StorageError) -> [StoredSessionSummary] {
        sessions.withLock { all in
            all.keys.sorted().map { StoredSessionSummary(id: $0, seq: all[$0]!.header.seq, annotationCount: all[$0]!.annotations.count) }
        }
    }

    public func commit(_ changes: [SessionChange]) throws(StorageError) {
        sessions.withLock { all in
            for change in changes {
                switch change {
                case .delete(let id):
                    all[id] = nil
                case .update(let u):
                    var header = u
                    header.upserted = []
                    header.removed = []
                    if u.replacesAnnotations || all[u.id] == nil { all[u.id] = (header, [:]) }
                    // Mutated in place: no copy of a large session's annotations per change.
                    all[u.id]!.header = header
                    for id in u.removed { all[u.id]!.annotations[id] = nil }
                    for a in u.upserted { all[u.id]!.annotations[a.id] = a }
                }
            }
        }
    }
}
