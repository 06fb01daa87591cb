/// Which camera a camera change moves.
public enum CameraTarget: Hashable, Sendable {
    /// The sender's own camera (presence).
    case own
    /// The session's shared (presenter) camera; needs the camera lease.
    case shared
}

/// A step of a camera change (regionWillChange / regionIsChanging / regionDidChange).
public enum CameraPhase: Hashable, Sendable {
    case begin(animated: Bool)
    case changing(Camera)
    case end(Camera, animated: Bool)

    public var camera: Camera? {
        switch self {
        case .begin: nil
        case .changing(let c), .end(let c, _): c
        }
    }
}

/// What a participant asks to join as.
public struct JoinRequest: Hashable, Sendable {
    public var name: String
    public var role: Role
    public var hidden: Bool
    public var color: Color?
    /// The participant id to join as (from a verified token); nil lets the session assign one.
    public var participant: ParticipantID?
    /// The id the participant had on an earlier connection (a resume's `participant`): its undo
    /// history passes to the joiner when that participant is no longer in the session.
    public var previous: ParticipantID?
    /// The epoch of that earlier connection (the join's `resume.epoch`), when the join resumes:
    /// an id of another epoch names someone else when this epoch gave it to a newer participant.
    public var previousEpoch: String?
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
    case camera(CameraTarget, CameraPhase, viewport: Viewport?)
    case acquireCameraLease(force: Bool)
    case releaseCameraLease
    case follow(FollowTarget?)
    indirect case addAnnotation(Annotation)
    /// `ifRevision`: apply only if the annotation is still at that revision (a conditional write).
    indirect case updateAnnotation(id: String, AnnotationPatch, ifRevision: UInt64? = nil)
    case removeAnnotation(id: String, ifRevision: UInt64? = nil)
    case select(annotation: String)
    case deselect
    indirect case showCallout(Callout)
    case hideCallout
    case tapCallout(Callout.Part)
    /// `ifRevision` (only with `starting`): start only if the annotation is still at that revision.
    case drag(annotation: String, state: DragState, coordinate: Coordinate?, ifRevision: UInt64? = nil)
    case mapLoad(MapLoad)
    case location(UserLocation?)
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
