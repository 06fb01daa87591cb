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

    /// The answer to a transient request (camera.changing, a drag move,
    /// location) that a later one of the same kind replaced before it was
    /// applied, while the connection was over its rate limit.
    public static func conflated(ref: JSONValue, seq: UInt64) -> [UInt8] {
        message("ack", [("ref", ref), ("seq", .number(Double(seq))), ("conflated", .bool(true))])
    }

    /// The answer to a refused request. The session is unchanged.
    public static func error(
        ref: JSONValue, code: SessionError.Code, message text: String, field: String? = nil, holder: Participant? = nil,
        retryAfterMs: Int? = nil
    ) -> [UInt8] {
        message("error", [
            ("ref", ref), ("code", .string(code.rawValue)), ("message", .string(text)),
            ("field", Wire.string(field)),
            ("holder", holder.map { .object(["id": .string($0.id), "name": .string($0.name)]) }),
            ("retryAfterMs", retryAfterMs.map { .number(Double($0)) }),
        ])
    }

    /// The answer to `join`: a snapshot, or (`resumed`) a promise that the
    /// missed events follow, then a `live` message.
    ///
    /// `annotations` is the session's annotation list as ``annotationsJSON(_:)``
    /// encodes it: the bulk of a snapshot, which a host encodes once for every
    /// joiner until an annotation changes.
    public static func welcome(ref: JSONValue, session: Session, participant: ParticipantID, resumedFrom: UInt64?, annotations: [UInt8]) -> [UInt8] {
        var out = message("welcome", [
            ("ref", ref), ("session", .string(session.id)), ("epoch", .string(session.epoch)),
            ("participant", .string(participant)), ("seq", .number(Double(session.seq))),
            ("resumed", .bool(resumedFrom != nil)),
            ("resumedFrom", resumedFrom.map { .number(Double($0)) }),
        ])
        guard resumedFrom == nil else { return out }
        // Reopen the object to add the snapshot, written from its parts.
        out.removeLast()
        out.append(contentsOf: #","snapshot":{"annotations":"#.utf8)
        out.append(contentsOf: annotations)
        for (key, value) in snapshotFields(session) {
            out.append(UInt8(ascii: ","))
            JSONWriter.writeString(key, into: &out)
            out.append(UInt8(ascii: ":"))
            JSONWriter.write(value, into: &out)
        }
        out.append(contentsOf: "}}".utf8)
        return out
    }

    /// Everything a client needs to draw the session as of `session.seq`.
    public static func snapshot(_ s: Session) -> JSONValue {
        var fields = Dictionary(uniqueKeysWithValues: snapshotFields(s))
        fields["annotations"] = .array(s.orderedAnnotations.map(Wire.annotation))
        return .object(fields)
    }

    /// The session's annotations in stacking order, encoded as in a snapshot.
    public static func annotationsJSON(_ s: Session) -> [UInt8] {
        var out: [UInt8] = []
        JSONWriter.write(.array(s.orderedAnnotations.map(Wire.annotation)), into: &out)
        return out
    }

    /// The snapshot's fields other than `annotations`, in the sorted order
    /// `JSONWriter` writes object keys (so both forms encode alike).
    static func snapshotFields(_ s: Session) -> [(String, JSONValue)] {
        [
            ("callout", s.callout.map(Wire.callout) ?? .null),
            ("calloutBy", Wire.string(s.calloutShownBy) ?? .null),
            ("cameraLease", Wire.string(s.cameraLeaseHolder) ?? .null),
            ("drags", drags(s)),
            ("participants", .array(s.visibleParticipants.map(Wire.participant))),
            ("seq", .number(Double(s.seq))),
            ("settings", Wire.settings(s.settings)),
            ("sharedCamera", s.sharedCamera.map(Wire.camera) ?? .null),
        ]
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
