/// A change the session broadcasts. Every participant sees events in the same order. Large
/// payloads are `indirect` (boxed), so the frequent events (moves, cameras) stay small to copy.
public enum Event: Hashable, Sendable {
    /// A participant joined (`participant.joined`), as it is now.
    indirect case participantJoined(Participant)
    /// A participant left (`participant.left`): `left`, `disconnected`, `slow_consumer` or `replaced`.
    case participantLeft(ParticipantID, reason: String)
    /// Several joins and leaves at once, in a large session: who joined (as they are now),
    /// then who left, each with its reason.
    indirect case presence(joined: [Participant], left: [PresenceLeave])
    /// A camera step. For `.own` targets, `participant` is the mover and
    /// `viewport` its current viewport (also when the step did not change it).
    case camera(CameraTarget, participant: ParticipantID, CameraPhase, viewport: Viewport?)
    /// The shared camera lease changed hands (holder nil: released).
    case cameraLease(holder: ParticipantID?, reason: String)
    /// A participant follows the shared camera or another participant; nil: it stopped following.
    case follow(ParticipantID, FollowTarget?)
    /// An annotation was added, with every default filled in and its revision.
    indirect case annotationAdded(Annotation)
    /// An annotation changed; carries the whole annotation after the change.
    indirect case annotationUpdated(Annotation)
    /// The annotation with this id was removed.
    case annotationRemoved(String)
    /// A participant's selection. `showsCallout`: the selector's own callout shows.
    case selection(ParticipantID, annotation: String?, showsCallout: Bool)
    /// The shared callout was shown, by the participant named.
    indirect case calloutShown(Callout, by: ParticipantID)
    /// The shared callout was hidden: `hidden`, `annotation_removed`, `annotation_changed`, `participant_left` or `location_cleared`.
    case calloutHidden(reason: String)
    /// A participant tapped a part of the shared callout, which points at `anchor`.
    case calloutTapped(Callout.Part, by: ParticipantID, anchor: Callout.Anchor)
    /// A drag step. `coordinate` is the annotation's coordinate after the step.
    case drag(annotation: String, participant: ParticipantID, state: DragState, coordinate: Coordinate, reason: DragEndReason?)
    /// A participant reported its map load state.
    case mapLoad(ParticipantID, MapLoad)
    /// The participant's location as others may see it (coarsened when reduced).
    case location(ParticipantID, UserLocation?)
    /// The session settings changed; carries them complete.
    indirect case settings(SessionSettings)
    /// An `undo` or `redo`: the change it makes follows at once.
    indirect case undone(UndoMark)
}

/// Key under which a newer transient event replaces an older unsent one.
public enum ConflationKey: Hashable, Sendable {
    /// A participant's own camera moves.
    case ownCamera(ParticipantID)
    /// The shared camera's moves.
    case sharedCamera
    /// The moves of one participant's drag of one annotation.
    case dragMove(annotation: String, participant: ParticipantID)
    /// A participant's shared location.
    case location(ParticipantID)
}

/// An event as the session emits it.
public struct Emitted: Hashable, Sendable {
    /// The change broadcast to the session.
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
    public var ended: EndedDrag? {
        get { endedStorage.first }
        set { endedStorage = newValue.map { [$0] } ?? [] }
    }
    /// `ended` out of line: a word in every emitted event, where the drag inline would take 64
    /// bytes of each move on the hot path; empty (no allocation) for all but a drag's end.
    private var endedStorage: [EndedDrag] = []

    /// Whether the event is transient: conflatable, unnumbered and not kept in history.
    public var isTransient: Bool { conflation != nil }

    /// Builds an emitted event; without `conflation` it is discrete.
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
    /// The participant that left.
    public var participant: ParticipantID
    /// Why it left, as in `participant.left`: `left`, `disconnected`, `slow_consumer` or `replaced`.
    public var reason: String
    /// Builds the entry for `participant` leaving for `reason`.
    public init(participant: ParticipantID, reason: String) {
        self.participant = participant
        self.reason = reason
    }
}
