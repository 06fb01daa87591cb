import MeridianCore

/// A drag step as broadcast (`drag` event).
public struct DragUpdate: Hashable, Sendable {
    /// The id of the annotation dragged.
    public var annotation: String
    /// The id of the participant dragging it.
    public var participant: String
    /// The drag's state after this step: `starting`, `dragging`, `ending`, `canceling` or `none`.
    public var state: DragState
    /// The annotation's coordinate after the step (for `starting`, its coordinate when the drag began).
    public var coordinate: Coordinate
    /// Set when the server canceled the drag (`lease_expired`, `holder_left`, …).
    public var reason: String?
    /// With `ending`: the annotation's revision after the commit (protocol §6.3).
    public var revision: UInt64? = nil
}

/// One event of the session (protocol §7.4), typed. Annotations, participants, callouts and
/// settings keep their JSON form (§8) so no field is lost.
public enum SessionEvent: Hashable, Sendable {
    /// `participant.joined`: a participant joined (its §8.7 object).
    case participantJoined(JSONValue)
    /// `participant.left`: a participant left; `reason` is `left`, `disconnected`, `slow_consumer`
    /// or `replaced`.
    case participantLeft(id: String, reason: String)
    /// Several joins and leaves announced together (large sessions, §7.4): joined participants
    /// in their JSON form, then who left and why.
    case presence(joined: [JSONValue], left: [Departure])
    /// `camera.begin`: `participant` started moving its own or the shared camera.
    case cameraBegin(target: CameraTarget, participant: String, animated: Bool)
    /// `camera.changing` (transient): a step of a camera move, with the camera as applied.
    case cameraChanging(target: CameraTarget, participant: String, camera: Camera)
    /// `camera.end`: a camera move ended, at the camera as applied.
    case cameraEnd(target: CameraTarget, participant: String, camera: Camera, animated: Bool)
    /// `camera.lease`: the shared camera's lease is now `holder`'s (nil: nobody's); `reason` is
    /// `acquired`, `taken_over`, `released` or `holder_left`.
    case cameraLease(holder: String?, reason: String)
    /// `follow`: `participant` now follows `target` (`"shared"` or a participant id), or nobody (nil).
    case follow(participant: String, target: String?)
    /// `annotation.added`: a new annotation (§8.6 object), every default filled in, with its `revision`.
    case annotationAdded(JSONValue)
    /// `annotation.updated`: the whole annotation after a change.
    case annotationUpdated(JSONValue)
    /// `annotation.removed`: the annotation `id` was removed.
    case annotationRemoved(id: String)
    /// `selection`: `participant` selected `annotation` (nil: deselected); `showsCallout` when its
    /// own callout shows for it.
    case selection(participant: String, annotation: String?, showsCallout: Bool)
    /// `callout.shown`: participant `by` showed the shared callout (§8.9 object).
    case calloutShown(callout: JSONValue, by: String)
    /// `callout.hidden`: the shared callout was dismissed; `reason` is `hidden`, `annotation_removed`,
    /// `annotation_changed`, `participant_left` or `location_cleared`.
    case calloutHidden(reason: String)
    /// `callout.tapped`: participant `by` tapped the callout's `part` (`body` or `accessory`);
    /// `anchor` is the callout's anchor.
    case calloutTapped(part: String, by: String, anchor: JSONValue)
    /// `drag`: a step of a drag (discrete, except moves after its first `dragging`).
    case drag(DragUpdate)
    /// `map.load`: `participant`'s map is `loading`, `loaded` or `failed` (then with `message`).
    case mapLoad(participant: String, state: String, message: String?)
    /// `location`: `participant`'s shared location (§8.8 object), or nil when it stopped sharing.
    case location(participant: String, location: JSONValue?)
    /// `settings`: the complete session settings after a change (§8.11).
    case settings(JSONValue)
    /// An `undo` (or, with `redo`, a `redo`) of `participant`'s change of `annotation`; the change
    /// it makes is the next event (protocol §6.9). `change` names the change reverted.
    case undone(participant: String, annotation: String, change: String, redo: Bool)
}

/// A participant that left, in a `presence` event.
public struct Departure: Hashable, Sendable {
    /// The id of the participant that left.
    public var id: String
    /// Why it left: `left`, `disconnected`, `slow_consumer` or `replaced`.
    public var reason: String
}

/// An event with its place in the session order.
public struct SequencedEvent: Hashable, Sendable {
    /// The event's seq: its own for a discrete event, the one it follows for a transient one.
    public var seq: UInt64
    /// Transient events follow `seq` without incrementing it (§4.2).
    public var isTransient: Bool
    /// What happened.
    public var event: SessionEvent
}

extension SessionEvent {
    /// Decodes an event object; nil when `type` names no event or a required field is missing.
    static func decode(_ type: String, _ m: JSONValue) -> SessionEvent? {
        func str(_ key: String) -> String? { m[key]?.stringValue }
        func target() -> CameraTarget { str("target") == "shared" ? .shared : .own }
        switch type {
        case "participant.joined":
            return m["participant"].map { .participantJoined($0) }
        case "participant.left":
            guard let id = str("participant") else { return nil }
            return .participantLeft(id: id, reason: str("reason") ?? "")
        case "presence":
            guard case .array(let joined)? = m["joined"], case .array(let left)? = m["left"] else { return nil }
            return .presence(joined: joined, left: left.compactMap { l in
                l["participant"]?.stringValue.map { Departure(id: $0, reason: l["reason"]?.stringValue ?? "") }
            })
        case "camera.begin":
            guard let p = str("participant") else { return nil }
            return .cameraBegin(target: target(), participant: p, animated: m["animated"]?.boolValue ?? false)
        case "camera.changing":
            guard let p = str("participant"), let c = m["camera"]?.cameraValue else { return nil }
            return .cameraChanging(target: target(), participant: p, camera: c)
        case "camera.end":
            guard let p = str("participant"), let c = m["camera"]?.cameraValue else { return nil }
            return .cameraEnd(target: target(), participant: p, camera: c, animated: m["animated"]?.boolValue ?? false)
        case "camera.lease":
            return .cameraLease(holder: str("holder"), reason: str("reason") ?? "")
        case "follow":
            guard let p = str("participant") else { return nil }
            return .follow(participant: p, target: str("target"))
        case "annotation.added":
            return m["annotation"].map { .annotationAdded($0) }
        case "annotation.updated":
            return m["annotation"].map { .annotationUpdated($0) }
        case "annotation.removed":
            return str("id").map { .annotationRemoved(id: $0) }
        case "selection":
            guard let p = str("participant") else { return nil }
            return .selection(participant: p, annotation: str("annotation"), showsCallout: m["showsCallout"]?.boolValue ?? false)
        case "callout.shown":
            guard let c = m["callout"], let by = str("by") else { return nil }
            return .calloutShown(callout: c, by: by)
        case "callout.hidden":
            return .calloutHidden(reason: str("reason") ?? "")
        case "callout.tapped":
            guard let part = str("part"), let by = str("by") else { return nil }
            return .calloutTapped(part: part, by: by, anchor: m["anchor"] ?? .null)
        case "drag":
            guard let id = str("id"), let p = str("participant"), let s = str("state").flatMap(DragState.init(rawValue:)),
                  let c = m["coordinate"]?.coordinateValue else { return nil }
            return .drag(DragUpdate(annotation: id, participant: p, state: s, coordinate: c, reason: str("reason"), revision: m["revision"]?.uint64Value))
        case "map.load":
            guard let p = str("participant"), let s = str("state") else { return nil }
            return .mapLoad(participant: p, state: s, message: str("message"))
        case "location":
            guard let p = str("participant") else { return nil }
            return .location(participant: p, location: m["location"]?.nonNull)
        case "settings":
            return m["settings"].map { .settings($0) }
        case "change.undone", "change.redone":
            guard let p = str("participant"), let a = str("annotation"), let c = str("change") else { return nil }
            return .undone(participant: p, annotation: a, change: c, redo: type == "change.redone")
        default:
            return nil
        }
    }
}
