/// One authoritative map session: the state every participant converges to,
/// and the rules that change it.
///
/// `Session` is a pure value: it owns no sockets, threads or clocks. Time is
/// passed in. Every accepted command returns the events to broadcast, in
/// order; a refused command returns an error and leaves the session unchanged.
public struct Session: Sendable {
    /// The session's id, as named by `join` and the HTTP API.
    public let id: String
    /// Changes whenever the session is loaded anew, so a client can tell that
    /// its `seq` belongs to an older life of the session.
    public let epoch: String
    /// The number of the last discrete event.
    public private(set) var seq: UInt64
    /// The settings owners change with `session.configure` (and the operator with ``reconfigure(_:)``).
    public internal(set) var settings: SessionSettings
    /// Size limits enforced on every command, fixed when the session is created.
    public let limits: SessionLimits
    /// Every annotation by id, at its live coordinate; while dragged, ``committedAnnotation(_:)`` gives its committed form.
    public internal(set) var annotations: [String: Annotation] = [:]
    /// Everyone joined, by id, hidden participants included.
    public internal(set) var participants: [ParticipantID: Participant] = [:]
    /// The camera everyone can follow, moved by the camera lease holder; nil until first moved.
    public internal(set) var sharedCamera: Camera?
    /// The participant allowed to move the shared camera, or nil when no one holds the lease.
    public internal(set) var cameraLeaseHolder: ParticipantID?
    /// The shared callout everyone sees, or nil when none is shown.
    public internal(set) var callout: Callout?
    /// Who showed the current callout.
    public internal(set) var calloutShownBy: ParticipantID?
    /// Drags in progress, keyed by the id of the annotation dragged.
    public internal(set) var drags: [String: DragGroup] = [:]
    /// Participants get ids `p1`, `p2`, … in join order.
    public internal(set) var joinCount: Int = 0
    /// ``joinCount`` when this epoch began: the ids it assigns since are past it.
    var firstJoinOfEpoch = 0
    /// Participant ids in join order (hidden ones included): ids from tokens are names, not
    /// numbers, so the order is kept rather than derived.
    public internal(set) var joinOrder: [ParticipantID] = []
    /// Joins and leaves not announced yet (large sessions announce them in batches).
    public internal(set) var pendingJoins: [ParticipantID] = []
    /// Leaves not announced yet, each with its reason (see ``flushPresence()``).
    public internal(set) var pendingLeaves: [PresenceLeave] = []
    /// Each participant's own changes that `undo` and `redo` revert, kept after it leaves.
    public internal(set) var histories: [ParticipantID: UndoHistory] = [:]
    /// Participants whose history changed since storage last took them.
    var changedHistories: Set<ParticipantID> = []
    /// The seq each absent annotation was last removed at, so that an undo of its removal is
    /// refused once someone added and removed it again.
    var removals: [String: UInt64] = [:]

    var validator: Validator { Validator(limits: limits) }

    /// Builds an empty session: no annotations, participants or callout, its `seq` starting at `seq`.
    public init(id: String, epoch: String, settings: SessionSettings = SessionSettings(), limits: SessionLimits = SessionLimits(), seq: UInt64 = 0) {
        self.id = id
        self.epoch = epoch
        self.settings = settings
        self.limits = limits
        self.seq = seq
    }

    /// Listed participants in join order (hidden ones excluded).
    public var visibleParticipants: [Participant] {
        joinOrder.compactMap { pid in participants[pid].flatMap { $0.hidden ? nil : $0 } }
    }

    /// Annotations in stacking order: lowest `zIndex` first, then by id.
    public var orderedAnnotations: [Annotation] {
        annotations.values.sorted { ($0.zIndex, $0.id) < ($1.zIndex, $1.id) }
    }

    /// The drag of `annotation` by `participant`, or `.none`.
    public func dragState(of annotation: String, by participant: ParticipantID) -> DragState {
        drags[annotation]?.drag(of: participant)?.state ?? .none
    }

    // MARK: Emitting

    /// Numbers a discrete event, or stamps a transient one with the current seq.
    mutating func emit(_ event: Event, transient key: ConflationKey? = nil, excluding: ParticipantID? = nil) -> Emitted {
        if key == nil { seq += 1 }
        return Emitted(event: event, seq: seq, conflation: key, excluding: excluding)
    }
}

/// The result of an accepted command.
public struct Accepted: Hashable, Sendable {
    /// Events to broadcast, in order.
    public var events: [Emitted]
    /// The camera the server applied when it differs from the one sent
    /// (normalised or clamped), so the sender can adopt it.
    public var camera: Camera?
    /// Builds the result of an accepted command: its events and, when adjusted, the camera applied.
    public init(events: [Emitted], camera: Camera? = nil) {
        self.events = events
        self.camera = camera
    }
}

/// What ``Session/apply(_:from:at:)`` returns: the accepted command's events, or why it was refused.
public typealias ApplyResult = Result<Accepted, SessionError>

