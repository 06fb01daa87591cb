import MeridianCore

/// A request the client sends after joining (protocol §6). `join` is sent by the client itself.
public enum SessionRequest: Hashable, Sendable {
    /// `leave`: leaves the session.
    case leave
    /// `ping`: answered by an `ack` with the session's current seq.
    case ping
    /// `camera.begin`: starts a move of the own or the shared camera (the shared one needs the lease).
    case cameraBegin(target: CameraTarget = .own, animated: Bool = false)
    /// `camera.changing`: a step of a camera move, sent on as a transient event.
    case cameraChanging(target: CameraTarget = .own, camera: Camera)
    /// `camera.end`: ends a camera move at `camera`.
    case cameraEnd(target: CameraTarget = .own, camera: Camera, animated: Bool = false)
    /// `camera.lease.acquire`: takes the shared camera's lease; with `force`, an owner takes it from
    /// a non-owner holder.
    case cameraLeaseAcquire(force: Bool = false)
    /// `camera.lease.release`: gives the shared camera's lease up.
    case cameraLeaseRelease
    /// `"shared"`, a participant id, or nil to stop following.
    case follow(String?)
    /// A whole annotation object as in §8.6.
    case annotationAdd(JSONValue)
    /// `ifRevision`: only if the annotation is still at that revision (§6.3), else `revision_conflict`.
    case annotationUpdate(id: String, changes: [String: JSONValue], ifRevision: UInt64? = nil)
    /// `annotation.remove`: removes annotation `id`; with `ifRevision`, only if it is still at that
    /// revision (§6.3).
    case annotationRemove(id: String, ifRevision: UInt64? = nil)
    /// `select`: makes annotation `id` this participant's selection.
    case select(id: String)
    /// `deselect`: clears this participant's selection.
    case deselect
    /// A callout object as in §8.9.
    case calloutShow(JSONValue)
    /// `callout.hide`: dismisses the shared callout.
    case calloutHide
    /// `callout.tap`: reports a tap on the shared callout's body or accessory.
    case calloutTap(part: Callout.Part)
    /// `ifRevision` only with `starting`: start only if the annotation is still at that revision.
    case drag(id: String, state: DragState, coordinate: Coordinate? = nil, ifRevision: UInt64? = nil)
    /// `map.load`: reports the map's loading state; `message` is required with `failed` and refused
    /// with the others.
    case mapLoad(state: MapLoadState, message: String? = nil)
    /// A location object as in §8.8, or nil to stop sharing.
    case location(JSONValue?)
    /// `session.configure` (owner): changes the given settings (`styleURL`, `tint`, `dragPolicy`,
    /// `leaseTimeoutMs`, `constraints`, §6.8).
    case configure(settings: [String: JSONValue])
    /// A fresh bearer token for this participant; prefer ``MeridianClient/refreshToken(_:)``.
    case refreshToken(String)
    /// Reverts this participant's own last change (protocol §6.9).
    case undo
    /// Makes the change the last `undo` reverted again.
    case redo

    /// The request's `type` on the wire.
    public var type: String {
        switch self {
        case .leave: "leave"
        case .ping: "ping"
        case .cameraBegin: "camera.begin"
        case .cameraChanging: "camera.changing"
        case .cameraEnd: "camera.end"
        case .cameraLeaseAcquire: "camera.lease.acquire"
        case .cameraLeaseRelease: "camera.lease.release"
        case .follow: "follow"
        case .annotationAdd: "annotation.add"
        case .annotationUpdate: "annotation.update"
        case .annotationRemove: "annotation.remove"
        case .select: "select"
        case .deselect: "deselect"
        case .calloutShow: "callout.show"
        case .calloutHide: "callout.hide"
        case .calloutTap: "callout.tap"
        case .drag: "drag"
        case .mapLoad: "map.load"
        case .location: "location"
        case .configure: "session.configure"
        case .refreshToken: "token.refresh"
        case .undo: "undo"
        case .redo: "redo"
        }
    }

    /// The fields besides `type` and `ref`.
    var fields: [String: JSONValue] {
        func target(_ t: CameraTarget) -> JSONValue { .string(t == .own ? "own" : "shared") }
        switch self {
        case .leave, .ping, .cameraLeaseRelease, .deselect, .calloutHide, .undo, .redo: return [:]
        case .cameraBegin(let t, let animated): return ["target": target(t), "animated": .bool(animated)]
        case .cameraChanging(let t, let camera): return ["target": target(t), "camera": .camera(camera)]
        case .cameraEnd(let t, let camera, let animated):
            return ["target": target(t), "camera": .camera(camera), "animated": .bool(animated)]
        case .cameraLeaseAcquire(let force): return ["force": .bool(force)]
        case .follow(let t): return ["target": t.map(JSONValue.string) ?? .null]
        case .annotationAdd(let a): return ["annotation": a]
        case .annotationUpdate(let id, let changes, let ifRevision):
            return Self.conditional(["id": .string(id), "changes": .object(changes)], ifRevision)
        case .annotationRemove(let id, let ifRevision): return Self.conditional(["id": .string(id)], ifRevision)
        case .select(let id): return ["id": .string(id)]
        case .calloutShow(let c): return ["callout": c]
        case .calloutTap(let part): return ["part": .string(part.rawValue)]
        case .drag(let id, let state, let coordinate, let ifRevision):
            var f: [String: JSONValue] = ["id": .string(id), "state": .string(state.rawValue)]
            if let coordinate { f["coordinate"] = .coordinate(coordinate) }
            return Self.conditional(f, ifRevision)
        case .mapLoad(let state, let message):
            var f: [String: JSONValue] = ["state": .string(state.rawValue)]
            if let message { f["message"] = .string(message) }
            return f
        case .location(let l): return ["location": l ?? .null]
        case .configure(let s): return ["settings": .object(s)]
        case .refreshToken(let token): return ["token": .string(token)]
        }
    }

    private static func conditional(_ fields: [String: JSONValue], _ ifRevision: UInt64?) -> [String: JSONValue] {
        guard let ifRevision else { return fields }
        return fields.merging(["ifRevision": .number(Double(ifRevision))]) { $1 }
    }

    /// The whole message as JSON text, with `ref`.
    func encoded(ref: Int) -> String {
        var f = fields
        f["type"] = .string(type)
        f["ref"] = .number(Double(ref))
        return String(decoding: JSONValue.object(f).encoded, as: UTF8.self)
    }
}
