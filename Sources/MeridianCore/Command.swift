/// Which camera a camera change moves.
public enum CameraTarget: Hashable, Sendable {
    /// The sender's own camera (presence).
    case own
    /// The session's shared (presenter) camera; needs the camera lease.
    case shared
}

/// A step of a camera change (regionWillChange / regionIsChanging / regionDidChange).
public enum CameraPhase: Hashable, Sendable {
    /// The camera starts moving (`camera.begin`); `animated` when the map animates the change.
    case begin(animated: Bool)
    /// An intermediate camera while it moves (`camera.changing`, transient).
    case changing(Camera)
    /// The camera came to rest here (`camera.end`); `animated` when the map animated the change.
    case end(Camera, animated: Bool)

    /// The camera the step carries; nil for `begin`.
    public var camera: Camera? {
        switch self {
        case .begin: nil
        case .changing(let c), .end(let c, _): c
        }
    }
}

/// What a participant asks to join as.
public struct JoinRequest: Hashable, Sendable {
    /// The name shown to the other participants.
    public var name: String
    /// The role asked for: what the participant may do.
    public var role: Role
    /// Whether to join unlisted, as a dashboard does: its joining and leaving are not announced.
    public var hidden: Bool
    /// The participant's colour; nil lets the session pick one from its palette.
    public var color: Color?
    /// The participant id to join as (from a verified token); nil lets the session assign one.
    public var participant: ParticipantID?
    /// The id the participant had on an earlier connection (a resume's `participant`): its undo
    /// history passes to the joiner when that participant is no longer in the session.
    public var previous: ParticipantID?
    /// The epoch of that earlier connection (the join's `resume.epoch`), when the join resumes:
    /// an id of another epoch names someone else when this epoch gave it to a newer participant.
    public var previousEpoch: String?
    /// Builds a join request; an id or colour left nil is chosen by the session, and no `previous` makes it a fresh join.
    public init(
        name: String, role: Role, hidden: Bool = false, color: Color? = nil, participant: ParticipantID? = nil, previous: ParticipantID? = nil,
        previousEpoch: String? = nil
    ) {
        self.name = name
        self.role = role
        self.hidden = hidden
        self.color = color
        self.participant = participant
        self.previous = previous
        self.previousEpoch = previousEpoch
    }
}

/// Everything a participant can ask of a session. Every command is validated
/// by the session; a refused command changes nothing.
/// Large payloads are `indirect` (boxed): a command is copied a few times on its way through
/// decoding and the hub, and the frequent ones (moves, cameras) should not carry the size of an
/// annotation patch.
public enum Command: Hashable, Sendable {
    /// Moves the sender's own or the shared camera one step (`camera.*`); `viewport` only with its own.
    case camera(CameraTarget, CameraPhase, viewport: Viewport?)
    /// Takes the shared camera lease (`camera.lease.acquire`); `force` lets an owner take it from a non-owner.
    case acquireCameraLease(force: Bool)
    /// Gives up the shared camera lease (`camera.lease.release`).
    case releaseCameraLease
    /// Follows the shared camera or a participant; nil stops following.
    case follow(FollowTarget?)
    /// Adds a new annotation (`annotation.add`).
    indirect case addAnnotation(Annotation)
    /// `ifRevision`: apply only if the annotation is still at that revision (a conditional write).
    indirect case updateAnnotation(id: String, AnnotationPatch, ifRevision: UInt64? = nil)
    /// Removes an annotation (`annotation.remove`); with `ifRevision`, only if it is still at that revision.
    case removeAnnotation(id: String, ifRevision: UInt64? = nil)
    /// Selects the annotation with this id, replacing the sender's selection.
    case select(annotation: String)
    /// Clears the sender's selection.
    case deselect
    /// Shows the shared callout, replacing any shown one (`callout.show`).
    indirect case showCallout(Callout)
    /// Hides the shared callout (`callout.hide`).
    case hideCallout
    /// Reports a tap on a part of the shared callout (`callout.tap`).
    case tapCallout(Callout.Part)
    /// `ifRevision` (only with `starting`): start only if the annotation is still at that revision.
    case drag(annotation: String, state: DragState, coordinate: Coordinate?, ifRevision: UInt64? = nil)
    /// Reports the sender's map load state (`map.load`).
    case mapLoad(MapLoad)
    /// Shares the sender's location; nil stops sharing it.
    case location(UserLocation?)
    /// Changes the session settings (`session.configure`, owner only).
    indirect case configure(SettingsPatch)
    /// Reverts the sender's own last change still in its history, as a new change.
    case undo
    /// Makes the change the sender's last `undo` reverted again.
    case redo

    /// The command's name on the wire, used in logs and metrics.
    public var name: String {
        switch self {
        case .camera(_, .begin, _): "camera.begin"
        case .camera(_, .changing, _): "camera.changing"
        case .camera(_, .end, _): "camera.end"
        case .acquireCameraLease: "camera.lease.acquire"
        case .releaseCameraLease: "camera.lease.release"
        case .follow: "follow"
        case .addAnnotation: "annotation.add"
        case .updateAnnotation: "annotation.update"
        case .removeAnnotation: "annotation.remove"
        case .select: "select"
        case .deselect: "deselect"
        case .showCallout: "callout.show"
        case .hideCallout: "callout.hide"
        case .tapCallout: "callout.tap"
        case .drag: "drag"
        case .mapLoad: "map.load"
        case .location: "location"
        case .configure: "session.configure"
        case .undo: "undo"
        case .redo: "redo"
        }
    }
}
