import MeridianCore

/// A drag step as broadcast (`drag` event).
public struct DragUpdate: Hashable, Sendable {
    public var annotation: String
    public var participant: String
    public var state: DragState
    public var coordinate: Coordinate
    /// Set when the server canceled the drag (`lease_expired`, `holder_left`, …).
    public var reason: String?
    /// With `ending`: the annotation's revision after the commit (protocol §6.3).
    public var revision: UInt64? = nil
}

/// One event of the session (protocol §7.4), typed. Annotations, participants, callouts and
/// settings keep their JSON form (§8) so no field is lost.
public enum SessionEvent: Hashable, Sendable {
    case participantJoined(JSONValue)
    case participantLeft(id: String, reason: String)
    /// Several joins and leaves announced together (large sessions, §7.4): joined participants
    /// in their JSON form, then who left and why.
    case presence(joined: [JSONValue], left: [Departure])
    case cameraBegin(target: CameraTarget, participant: String, animated: Bool)
    case cameraChanging(target: CameraTarget, participant: String, camera: Camera)
    case cameraEnd(target: CameraTarget, participant: String, camera: Camera, animated: Bool)
    case cameraLease(holder: String?, reason: String)
    case follow(participant: String, target: String?)
    case annotationAdded(JSONValue)
    case annotationUpdated(JSONValue)
    case annotationRemoved(id: String)
    case selection(participant: String, annotation: String?, showsCallout: Bool)
    case calloutShown(callout: JSONValue, by: String)
    case calloutHidden(reason: String)
    case calloutTapped(part: String, by: String, anchor: JSONValue)
    case drag(DragUpdate)
    case mapLoad(participant: String, state: String, message: String?)
    case location(participant: String, location: JSONValue?)
    case settings(JSONValue)
    /// An `undo` (or, with `redo`, a `redo`) of `participant`'s change of `annotation`; the change
    /// it makes is the next event (protocol §6.9). `change` names the change reverted.
    case undone(participant: String, annotation: String, change: String, redo: Bool)
}

/// A participant that left, in a `presence` event.
public struct Departure: Hashable, Sendable {
    public var id: String
    public var reason: String
}

/// An event with its place in the session order.
public struct SequencedEvent: Hashable, Sendable {
    public var seq: UInt64
    /// Transient events follow `seq` without incrementing it (§4.2).
    public var isTransient: Bool
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
