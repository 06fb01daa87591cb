/// A change the session broadcasts. Every participant sees events in the same order. Large
/// payloads are `indirect` (boxed), so the frequent events (moves, cameras) stay small to copy.
public enum Event: Hashable, Sendable {
    indirect case participantJoined(Participant)
    case participantLeft(ParticipantID, reason: String)
    /// Several joins and leaves at once, in a large session: who joined (as they are now),
    /// then who left, each with its reason.
    indirect case presence(joined: [Participant], left: [PresenceLeave])
    /// A camera step. For `.own` targets, `participant` is the mover and
    /// `viewport` its current viewport (also when the step did not change it).
    case camera(CameraTarget, participant: ParticipantID, CameraPhase, viewport: Viewport?)
    /// The shared camera lease changed hands (holder nil: released).
    case cameraLease(holder: ParticipantID?, reason: String)
    case follow(ParticipantID, FollowTarget?)
    indirect case annotationAdded(Annotation)
    indirect case annotationUpdated(Annotation)
    case annotationRemoved(String)
    /// A participant's selection. `showsCallout`: the selector's own callout shows.
    case selection(ParticipantID, annotation: String?, showsCallout: Bool)
    indirect case calloutShown(Callout, by: ParticipantID)
    case calloutHidden(reason: String)
    case calloutTapped(Callout.Part, by: ParticipantID, anchor: Callout.Anchor)
    /// A drag step. `coordinate` is the annotation's coordinate after the step.
    case drag(annotation: String, participant: ParticipantID, state: DragState, coordinate: Coordinate, reason: DragEndReason?)
    case mapLoad(ParticipantID, MapLoad)
    /// The participant's location as others may see it (coarsened when reduced).
    case location(ParticipantID, UserLocation?)
    indirect case settings(SessionSettings)
    /// An `undo` or `redo`: the change it makes follows at once.
    indirect case undone(UndoMark)
}

/// Key under which a newer transient event replaces an older unsent one.
public enum ConflationKey: Hashable, Sendable {
    case ownCamera(ParticipantID)
    case sharedCamera
    case dragMove(annotation: String, participant: ParticipantID)
    case location(ParticipantID)
}

/// An event as the session emits it.
public struct Emitted: Hashable, Sendable {
    public var event: Event
    /// Discrete events get the next `seq`; transient events carry the `seq`
    /// they follow and are not numbered.
    public var seq: UInt64
    /// Set for transient events: frames that may be conflated for slow receivers
    /// and are not kept in history.
    public var conflation: ConflationKey?
    /// A participant who must not receive it (it learns the change otherwise).
    public var excluding: ParticipantID?
    /// For a drag's `canceling` or `ending`: the drag it ends, as it was just before. Not sent:
    /// an `interest` message that stands before the event lists that drag (SPEC §4.7).
    public var ended: EndedDrag?

    public var isTransient: Bool { conflation != nil }

    public init(event: Event, seq: UInt64, conflation: ConflationKey? = nil, excluding: ParticipantID? = nil, ended: EndedDrag? = nil) {
        self.event = event
        self.seq = seq
        self.conflation = conflation
        self.excluding = excluding
        self.ended = ended
    }
}

/// A participant that left, in a `presence` batch.
public struct PresenceLeave: Hashable, Sendable {
    public var participant: ParticipantID
    public var reason: String
    public init(participant: ParticipantID, reason: String) {
        self.participant = participant
        self.reason = reason
    }
}
