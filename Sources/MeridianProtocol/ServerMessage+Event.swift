import MeridianCore

extension ServerMessage {
    /// One broadcast event, encoded once for every recipient.
    public static func event(_ e: Emitted) -> [UInt8] {
        var fields: [(String, JSONValue?)] = [("seq", .number(Double(e.seq)))]
        if e.isTransient { fields.append(("transient", .bool(true))) }
        let type: String
        switch e.event {
        case .participantJoined(let p):
            type = "participant.joined"
            fields.append(("participant", Wire.participant(p)))
        case .participantLeft(let pid, let reason):
            type = "participant.left"
            fields += [("participant", .string(pid)), ("reason", .string(reason))]
        case .camera(let target, let pid, let phase, let viewport):
            fields += [("target", .string(target == .own ? "own" : "shared")), ("participant", .string(pid))]
            switch phase {
            case .begin(let animated):
                type = "camera.begin"
                fields.append(("animated", .bool(animated)))
            case .changing(let c):
                type = "camera.changing"
                fields.append(("camera", Wire.camera(c)))
            case .end(let c, let animated):
                type = "camera.end"
                fields += [("camera", Wire.camera(c)), ("animated", .bool(animated))]
            }
            fields.append(("viewport", viewport.map(Wire.viewport)))
        case .cameraLease(let holder, let reason):
            type = "camera.lease"
            fields += [("holder", Wire.string(holder) ?? .null), ("reason", .string(reason))]
        case .follow(let pid, let target):
            type = "follow"
            fields += [("participant", .string(pid)), ("target", Wire.follow(target))]
        case .annotationAdded(let a):
            type = "annotation.added"
            fields.append(("annotation", Wire.annotation(a)))
        case .annotationUpdated(let a):
            type = "annotation.updated"
            fields.append(("annotation", Wire.annotation(a)))
        case .annotationRemoved(let id):
            type = "annotation.removed"
            fields.append(("id", .string(id)))
        case .selection(let pid, let id, let showsCallout):
            type = "selection"
            fields += [("participant", .string(pid)), ("annotation", Wire.string(id) ?? .null), ("showsCallout", .bool(showsCallout))]
        case .calloutShown(let c, let by):
            type = "callout.shown"
            fields += [("callout", Wire.callout(c)), ("by", .string(by))]
        case .calloutHidden(let reason):
            type = "callout.hidden"
            fields.append(("reason", .string(reason)))
        case .calloutTapped(let part, let by, let anchor):
            type = "callout.tapped"
            fields += [("part", .string(part.rawValue)), ("by", .string(by)), ("anchor", Wire.anchor(anchor))]
        case .drag(let id, let pid, let state, let coordinate, let reason):
            type = "drag"
            fields += [
                ("id", .string(id)), ("participant", .string(pid)), ("state", .string(state.rawValue)),
                ("coordinate", Wire.coordinate(coordinate)), ("reason", Wire.string(reason?.rawValue)),
            ]
        case .mapLoad(let pid, let m):
            type = "map.load"
            fields += [("participant", .string(pid)), ("state", .string(m.state.rawValue)), ("message", Wire.string(m.message))]
        case .location(let pid, let l):
            type = "location"
            fields += [("participant", .string(pid)), ("location", Wire.location(l))]
        case .settings(let s):
            type = "settings"
            fields.append(("settings", Wire.settings(s)))
        }
        return message(type, fields)
    }
}
