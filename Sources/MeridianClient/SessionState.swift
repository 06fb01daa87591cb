import MeridianCore

/// The client's mirror of a session: built from a snapshot, then advanced by events in `seq`
/// order. Two clients that processed the same seq hold equal states.
public struct SessionState: Hashable, Sendable {
    /// The seq of the last discrete event applied.
    public internal(set) var seq: UInt64
    /// Settings object (§8.11).
    public internal(set) var settings: JSONValue
    /// Annotations by id (§8.6 objects).
    public internal(set) var annotations: [String: JSONValue]
    /// Listed participants by id (§8.7 objects, kept up to date with presence events).
    public internal(set) var participants: [String: JSONValue]
    /// Participant ids in join order.
    public internal(set) var participantOrder: [String]
    /// The shared camera; nil when the session has none.
    public internal(set) var sharedCamera: Camera?
    /// The id of the participant holding the shared camera's lease; nil when nobody does.
    public internal(set) var cameraLease: String?
    /// The shared callout (an §8.9 object); nil when none is shown.
    public internal(set) var callout: JSONValue?
    /// The id of the participant that showed the shared callout; nil when none is shown.
    public internal(set) var calloutBy: String?
    /// Drags in progress keyed by annotation id, then participant id.
    public internal(set) var drags: [String: [String: DragUpdate]]
    /// Whether the stream is filtered by viewport interest (§4.7): its transient events may carry a
    /// seq it has not accounted for yet (the `skipped` marker comes before the next discrete event).
    public internal(set) var isFiltered = false

    /// What ``apply(_:)`` did with an event.
    public enum ApplyResult: Hashable, Sendable {
        /// The event was next in order and the mirror now reflects it.
        case applied
        /// Already reflected (a seq at or below the mirror's): ignored.
        case stale
        /// Events are missing before this one: the connection must resume.
        case gap(expected: UInt64)
    }

    /// The state described by a `welcome.snapshot` (§7.2).
    public init(snapshot s: JSONValue) {
        seq = s["seq"]?.uint64Value ?? 0
        settings = s["settings"] ?? .object([:])
        annotations = [:]
        for a in s["annotations"]?.arrayValue ?? [] {
            if let id = a["id"]?.stringValue { annotations[id] = a }
        }
        participants = [:]
        participantOrder = []
        for p in s["participants"]?.arrayValue ?? [] {
            if let id = p["id"]?.stringValue { participants[id] = p; participantOrder.append(id) }
        }
        sharedCamera = s["sharedCamera"]?.cameraValue
        cameraLease = s["cameraLease"]?.stringValue
        callout = s["callout"]?.nonNull
        calloutBy = s["calloutBy"]?.stringValue
        drags = [:]
        for d in s["drags"]?.arrayValue ?? [] {
            guard let id = d["id"]?.stringValue, let p = d["participant"]?.stringValue,
                  let state = d["state"]?.stringValue.flatMap(DragState.init(rawValue:)),
                  let c = d["coordinate"]?.coordinateValue else { continue }
            drags[id, default: [:]][p] = DragUpdate(annotation: id, participant: p, state: state, coordinate: c, reason: nil)
        }
    }

    /// Applies one event if it is next in order (discrete: seq + 1; transient: the current seq, or
    /// with viewport interest any later one).
    @discardableResult
    public mutating func apply(_ e: SequencedEvent) -> ApplyResult {
        if e.isTransient {
            if e.seq < seq { return .stale }
            if e.seq > seq && !isFiltered { return .gap(expected: seq) }
        } else {
            if e.seq <= seq { return .stale }
            if e.seq > seq + 1 { return .gap(expected: seq + 1) }
            seq = e.seq
        }
        applyEvent(e.event)
        return .applied
    }

    private mutating func setField(_ participant: String, _ key: String, _ value: JSONValue?) {
        guard case .object(var o)? = participants[participant] else { return }
        o[key] = value
        participants[participant] = .object(o)
    }

    /// Adds or, if known already (from a snapshot taken before the announcement), replaces.
    private mutating func addParticipant(_ p: JSONValue) {
        guard let id = p["id"]?.stringValue else { return }
        if participants[id] == nil { participantOrder.append(id) }
        participants[id] = p
    }

    private mutating func removeParticipant(_ id: String) {
        participants[id] = nil
        participantOrder.removeAll { $0 == id }
    }

    private mutating func applyEvent(_ event: SessionEvent) {
        switch event {
        case .participantJoined(let p):
            addParticipant(p)
        case .participantLeft(let id, _):
            removeParticipant(id)
        case .presence(let joined, let left):
            for p in joined { addParticipant(p) }
            for departure in left { removeParticipant(departure.id) }
        case .cameraBegin:
            break
        case .cameraChanging(let target, let p, let camera), .cameraEnd(let target, let p, let camera, _):
            if target == .shared { sharedCamera = camera } else { setField(p, "camera", .camera(camera)) }
        case .cameraLease(let holder, _):
            cameraLease = holder
        case .follow(let p, let target):
            setField(p, "following", target.map(JSONValue.string))
        case .annotationAdded(let a), .annotationUpdated(let a):
            if let id = a["id"]?.stringValue { annotations[id] = a }
        case .annotationRemoved(let id):
            annotations[id] = nil
            drags[id] = nil
        case .selection(let p, let id, _):
            setField(p, "selection", id.map(JSONValue.string))
        case .calloutShown(let c, let by):
            callout = c
            calloutBy = by
        case .calloutHidden:
            callout = nil
            calloutBy = nil
        case .calloutTapped:
            break
        case .drag(let d):
            setCoordinate(d.annotation, d.coordinate)
            if d.state == .ending, let revision = d.revision { setRevision(d.annotation, revision) }
            if d.state == .none {
                drags[d.annotation]?[d.participant] = nil
                if drags[d.annotation]?.isEmpty == true { drags[d.annotation] = nil }
            } else {
                drags[d.annotation, default: [:]][d.participant] = d
            }
        case .mapLoad(let p, let state, let message):
            var m: [String: JSONValue] = ["state": .string(state)]
            if let message { m["message"] = .string(message) }
            setField(p, "mapLoad", .object(m))
        case .location(let p, let location):
            setField(p, "location", location)
        case .settings(let s):
            settings = s
        case .undone:
            break // the change it makes follows
        }
    }

    /// The revision of annotation `id` as the mirror holds it (protocol §6.3): what a conditional
    /// request (`ifRevision`) sends to change it only if nobody has since.
    public func revision(of id: String) -> UInt64? {
        annotations[id]?["revision"]?.uint64Value
    }

    private mutating func setRevision(_ id: String, _ revision: UInt64) {
        guard case .object(var o)? = annotations[id] else { return }
        o["revision"] = .number(Double(revision))
        annotations[id] = .object(o)
    }

    private mutating func setCoordinate(_ id: String, _ c: Coordinate) {
        guard case .object(var o)? = annotations[id], o["coordinate"] != nil else { return }
        o["coordinate"] = .coordinate(c)
        annotations[id] = .object(o)
    }

    /// Overwrites the transient state with a `live` message (§7.3), sent after a resume.
    mutating func applyLive(_ live: JSONValue) {
        sharedCamera = live["sharedCamera"]?.cameraValue
        for p in live["participants"]?.arrayValue ?? [] {
            guard let id = p["id"]?.stringValue else { continue }
            setField(id, "camera", p["camera"]?.nonNull)
            setField(id, "viewport", p["viewport"]?.nonNull)
            setField(id, "location", p["location"]?.nonNull)
        }
        for a in live["annotations"]?.arrayValue ?? [] {
            if let id = a["id"]?.stringValue, let c = a["coordinate"]?.coordinateValue { setCoordinate(id, c) }
        }
    }
}
