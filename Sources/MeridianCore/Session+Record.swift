/// The durable part of a session: what storage keeps and a restart restores.
/// Participants, cameras, drags in progress and presence are not part of it.
public struct SessionRecord: Hashable, Sendable {
    /// The id of the session the record belongs to.
    public var id: String
    /// The session's settings, restored as they were.
    public var settings: SessionSettings
    /// In committed form: an annotation being dragged is at its last committed coordinate.
    public var annotations: [Annotation]
    /// The shared callout shown when the record was taken, or nil; one anchored to a participant is not restored.
    public var callout: Callout?
    /// The session's `seq` when the record was taken.
    public var seq: UInt64
    /// Each participant's undo history, so that an undo works after a restart or a failover.
    public var histories: [ParticipantID: UndoHistory]

    /// Builds a record from its parts; all but the id and settings default to empty (and `seq` to 0).
    public init(
        id: String, settings: SessionSettings, annotations: [Annotation] = [], callout: Callout? = nil, seq: UInt64 = 0,
        histories: [ParticipantID: UndoHistory] = [:]
    ) {
        self.id = id
        self.settings = settings
        self.annotations = annotations
        self.callout = callout
        self.seq = seq
        self.histories = histories
    }
}

extension Session {
    /// Rebuilds a session from its durable record, with a new `epoch` and no
    /// participants. A callout anchored to a participant is not restored: its
    /// participant is gone.
    public init(restoring record: SessionRecord, epoch: String, limits: SessionLimits = SessionLimits()) {
        self.init(id: record.id, epoch: epoch, settings: record.settings, limits: limits, seq: record.seq)
        for a in record.annotations { annotations[a.id] = a }
        histories = record.histories
        removals = Self.removals(in: histories, of: annotations)
        // Ids the session assigns (`p1`, `p2`, …) start past those of the histories it kept, so
        // that a newcomer never gets the history of an earlier participant by its id.
        joinCount = histories.keys.compactMap { $0.first == "p" ? Int($0.dropFirst()) : nil }.max() ?? 0
        firstJoinOfEpoch = joinCount
        if let c = record.callout {
            if case .participant = c.anchor {} else { callout = c }
        }
    }

    /// The committed form of an annotation: while it is dragged, its
    /// coordinate is the drag group's origin (what a cancel would restore),
    /// never a transient drag position. Nil if there is no such annotation.
    public func committedAnnotation(_ id: String) -> Annotation? {
        guard var a = annotations[id] else { return nil }
        if let origin = drags[id]?.origin, case .point(var p) = a.shape {
            p.coordinate = origin
            a.shape = .point(p)
        }
        return a
    }

    /// The session's durable state now, in committed form.
    public var record: SessionRecord {
        SessionRecord(
            id: id, settings: settings,
            annotations: orderedAnnotations.compactMap { committedAnnotation($0.id) },
            callout: callout, seq: seq, histories: histories)
    }
}

extension Session {
    /// A settings change made by the server's operator (the HTTP API) rather
    /// than by a participant: validated as for an owner, events to broadcast.
    public mutating func reconfigure(_ patch: SettingsPatch) -> Result<[Emitted], SessionError> {
        do throws(SessionError) {
            return .success(try applySettings(patch))
        } catch {
            return .failure(error)
        }
    }
}
