import MeridianCore

/// One durable change to one session, as the server commits it.
///
/// A change may carry a *fencing number*: in a cluster, the number of the lease under which
/// the session's owner node writes, growing with every new owner. A store that enforces fences
/// (``InMemorySessionStore``, a shared database) writes a fenced change only if the session's
/// stored fence is not above it, and then stores it; otherwise it refuses the whole commit
/// with ``StorageError/fenced(session:stored:offered:)``. Nil is no fence (a single node).
public enum SessionChange: Hashable, Sendable {
    /// Writes the session's header (settings, callout, seq, epoch), creating
    /// the session if needed, then its changed annotations.
    case update(SessionUpdate)
    /// Removes the session and its annotations; refused if `fence` is below the stored one.
    case delete(id: String, fence: UInt64? = nil)

    /// The id of the session the change writes or deletes.
    public var sessionID: String {
        switch self {
        case .update(let u): u.id
        case .delete(let id, _): id
        }
    }

    /// The fencing number the change was made under, nil for none.
    public var fence: UInt64? {
        switch self {
        case .update(let u): u.fence
        case .delete(_, let fence): fence
        }
    }
}

/// A write of one session: its header (settings, callout, seq, epoch) and the annotations and
/// undo histories that changed, or its whole record.
public struct SessionUpdate: Hashable, Sendable {
    /// The id of the session written; a session not stored yet is created.
    public var id: String
    /// The epoch of the session's current life, kept as that of its last life (SPEC §4.5).
    public var epoch: String
    /// The session's seq at this change: the number of the last discrete event it includes.
    public var seq: UInt64
    /// The session's settings, replacing the stored ones whole.
    public var settings: SessionSettings
    /// The shared callout, replacing the stored one; nil: none is shown.
    public var callout: Callout?
    /// Annotations in committed form, inserted or replaced.
    public var upserted: [Annotation]
    /// Ids of the annotations removed from the stored session.
    public var removed: [String]
    /// True: every stored annotation not in `upserted` is removed first (a whole record).
    public var replacesAnnotations: Bool
    /// The fencing number of the owner's lease (see ``SessionChange``); nil: no fencing (a single node).
    public var fence: UInt64?
    /// Undo histories written (nil: forgotten), by participant. With `replacesAnnotations`, every
    /// stored history not here is removed first, as annotations are.
    public var histories: [ParticipantID: UndoHistory?]

    /// A write of the session's header with the given annotation and history changes (by default
    /// none: the header alone).
    public init(
        id: String, epoch: String, seq: UInt64, settings: SessionSettings, callout: Callout?,
        upserted: [Annotation] = [], removed: [String] = [], replacesAnnotations: Bool = false, fence: UInt64? = nil,
        histories: [ParticipantID: UndoHistory?] = [:]
    ) {
        self.id = id
        self.epoch = epoch
        self.seq = seq
        self.settings = settings
        self.callout = callout
        self.upserted = upserted
        self.removed = removed
        self.replacesAnnotations = replacesAnnotations
        self.fence = fence
        self.histories = histories
    }

    /// The whole record, replacing whatever was stored.
    public init(record: SessionRecord, epoch: String, fence: UInt64? = nil) {
        self.init(id: record.id, epoch: epoch, seq: record.seq, settings: record.settings, callout: record.callout,
                  upserted: record.annotations, replacesAnnotations: true, fence: fence,
                  histories: record.histories.mapValues { .some($0) })
    }
}
