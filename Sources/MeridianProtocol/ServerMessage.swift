import MeridianCore

/// Encodes every server-to-client message of Protocol v1. Top-level fields
/// are written in a fixed order (`type` first); nested objects with sorted keys.
public enum ServerMessage {
    static func message(_ type: String, _ fields: [(String, JSONValue?)]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(128)
        out.append(contentsOf: #"{"type":"#.utf8)
        JSONWriter.writeString(type, into: &out)
        for (key, value) in fields {
            guard let value else { continue }
            out.append(UInt8(ascii: ","))
            JSONWriter.writeString(key, into: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.write(value, into: &out)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }

    /// The answer to an accepted request.
    public static func ack(ref: JSONValue, seq: UInt64, camera: Camera? = nil) -> [UInt8] {
        message("ack", [("ref", ref), ("seq", .number(Double(seq))), ("camera", camera.map(Wire.camera))])
    }

    /// The answer to a refused request. The session is unchanged.
    public static func error(ref: JSONValue, code: SessionError.Code, message text: String, field: String? = nil, holder: Participant? = nil) -> [UInt8] {
        message("error", [
            ("ref", ref), ("code", .string(code.rawValue)), ("message", .string(text)),
            ("field", Wire.string(field)),
            ("holder", holder.map { .object(["id": .string($0.id), "name": .string($0.name)]) }),
        ])
    }

    /// The answer to `join`: a snapshot, or (`resumed`) a promise that the
    /// missed events follow, then a `live` message.
    public static func welcome(ref: JSONValue, session: Session, participant: ParticipantID, resumedFrom: UInt64?) -> [UInt8] {
        message("welcome", [
            ("ref", ref), ("session", .string(session.id)), ("epoch", .string(session.epoch)),
            ("participant", .string(participant)), ("seq", .number(Double(session.seq))),
            ("resumed", .bool(resumedFrom != nil)),
            ("resumedFrom", resumedFrom.map { .number(Double($0)) }),
            ("snapshot", resumedFrom == nil ? snapshot(session) : nil),
        ])
    }

    /// Everything a client needs to draw the session as of `session.seq`.
    public static func snapshot(_ s: Session) -> JSONValue {
        Wire.object([
            ("seq", .number(Double(s.seq))), ("settings", Wire.settings(s.settings)),
            ("annotations", .array(s.orderedAnnotations.map(Wire.annotation))),
            ("participants", .array(s.visibleParticipants.map(Wire.participant))),
            ("sharedCamera", s.sharedCamera.map(Wire.camera) ?? .null),
            ("cameraLease", Wire.string(s.cameraLeaseHolder) ?? .null),
            ("callout", s.callout.map(Wire.callout) ?? .null),
            ("calloutBy", Wire.string(s.calloutShownBy) ?? .null),
            ("drags", drags(s)),
        ])
    }

    static func drags(_ s: Session) -> JSONValue {
        .array(s.drags.keys.sorted().flatMap { id in
            s.drags[id]!.drags.map { d in
                JSONValue.object([
                    "id": .string(id), "participant": .string(d.participant),
                    "state": .string(d.state.rawValue), "coordinate": Wire.coordinate(d.coordinate),
                ])
            }
        })
    }

    /// After a resume: the current transient state (cameras, locations, live
    /// drag coordinates) the client may have missed, since transient frames
    /// are not replayed.
    public static func live(_ s: Session) -> [UInt8] {
        let dragged = s.drags.keys.sorted().compactMap { id in
            s.annotations[id]?.point.map { JSONValue.object(["id": .string(id), "coordinate": Wire.coordinate($0.coordinate)]) }
        }
        let presence = s.visibleParticipants.map { p in
            Wire.object([
                ("id", .string(p.id)), ("camera", p.camera.map(Wire.camera) ?? .null),
                ("viewport", p.viewport.map(Wire.viewport) ?? .null), ("location", Wire.location(p.location)),
            ])
        }
        return message("live", [
            ("seq", .number(Double(s.seq))), ("sharedCamera", s.sharedCamera.map(Wire.camera) ?? .null),
            ("participants", .array(presence)), ("annotations", .array(dragged)),
        ])
    }
}
