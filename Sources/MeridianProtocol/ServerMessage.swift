import MeridianCore

/// Encodes every server-to-client message of Protocol v1 straight into bytes. Top-level
/// fields are written in a fixed order (`type` first, then as SPEC §7 lists them); nested
/// objects with their keys in alphabetical order.
///
/// Each message has a form that appends to a ``JSONOutput`` (so the caller can reserve
/// room for a frame header in front) and one that returns the bytes.
public enum ServerMessage {
    /// A message with generic fields, for the messages off the hot path (dashboards).
    static func message(_ type: String, _ fields: [(String, JSONValue?)]) -> [UInt8] {
        var out = JSONOutput()
        out.raw(#"{"type":"#)
        out.string(type)
        for (key, value) in fields {
            guard let value else { continue }
            out.raw(",")
            out.string(key)
            out.raw(":")
            out.value(value)
        }
        out.raw("}")
        return out.bytes
    }

    /// Whether a message is the answer to a request (`ack`, `error` or `welcome`: SPEC §2, every
    /// request gets exactly one) rather than an event, from its first bytes: the encoders below
    /// start each answer so, and no other message. `payload` may be the first fragment only.
    public static func isAnswer(_ payload: UnsafeRawBufferPointer) -> Bool {
        answerStarts.contains { start in payload.count >= start.count && payload.prefix(start.count).elementsEqual(start) }
    }

    private static let answerStarts: [[UInt8]] = [#"{"type":"ack","ref":"#, #"{"type":"error","ref":"#, #"{"type":"welcome","ref":"#]
        .map { Array($0.utf8) }

    /// The answer to an accepted request.
    public static func ack(ref: RequestRef, seq: UInt64, camera: Camera? = nil) -> [UInt8] {
        var out = JSONOutput()
        ack(ref: ref, seq: seq, camera: camera, into: &out)
        return out.bytes
    }

    /// Appends the `ack` for an accepted request to `out`: `ref` as sent, `seq` the session's seq after the request, and `camera` only when the applied camera differs from the one sent.
    public static func ack(ref: RequestRef, seq: UInt64, camera: Camera? = nil, into out: inout JSONOutput) {
        out.raw(#"{"type":"ack","ref":"#)
        out.ref(ref)
        out.raw(#","seq":"#)
        out.integer(seq)
        if let camera {
            out.raw(#","camera":"#)
            out.camera(camera)
        }
        out.raw("}")
    }

    /// The answer to a transient request (camera.changing, a drag move,
    /// location) that a later one of the same kind replaced before it was
    /// applied, while the connection was over its rate limit.
    public static func conflated(ref: RequestRef, seq: UInt64) -> [UInt8] {
        var out = JSONOutput()
        out.raw(#"{"type":"ack","ref":"#)
        out.ref(ref)
        out.raw(#","seq":"#)
        out.integer(seq)
        out.raw(#","conflated":true}"#)
        return out.bytes
    }

    /// The session moved to another node of a cluster and this connection, whose join asked for
    /// `handover`, stays open: it is in no session now, and the server joins it again with its
    /// join's parameters; the answer (a `welcome` with a fresh snapshot, or an `error`) carries
    /// `ref`, the ref of that join.
    public static func moved(ref: RequestRef, session: String, reason: String) -> [UInt8] {
        var out = JSONOutput()
        out.raw(#"{"type":"moved","ref":"#)
        out.ref(ref)
        out.raw(#","session":"#)
        out.string(session)
        out.raw(#","reason":"#)
        out.string(reason)
        out.raw("}")
        return out.bytes
    }

    /// The answer to a refused request. The session is unchanged. `annotation` (with
    /// `revision_conflict`) is the annotation as it is now; its revision is written beside it.
    public static func error(
        ref: RequestRef, code: SessionError.Code, message text: String, field: String? = nil, holder: Participant? = nil,
        annotation: Annotation? = nil, retryAfterMs: Int? = nil
    ) -> [UInt8] {
        var out = JSONOutput()
        out.raw(#"{"type":"error","ref":"#)
        out.ref(ref)
        out.raw(#","code":"#)
        out.string(code.rawValue)
        out.raw(#","message":"#)
        out.string(text)
        if let field {
            out.raw(#","field":"#)
            out.string(field)
        }
        if let holder {
            out.raw(#","holder":{"id":"#)
            out.string(holder.id)
            out.raw(#","name":"#)
            out.string(holder.name)
            out.raw("}")
        }
        if let annotation {
            out.raw(#","revision":"#)
            out.integer(annotation.revision)
            out.raw(#","annotation":"#)
            out.annotation(annotation)
        }
        if let retryAfterMs {
            out.raw(#","retryAfterMs":"#)
            out.integer(retryAfterMs)
        }
        out.raw("}")
        return out.bytes
    }

    /// The answer to `join`: a snapshot, or (`resumed`) a promise that the
    /// missed events follow, then a `live` message.
    ///
    /// `annotations` is the session's annotation list as ``annotationsJSON(_:)``
    /// encodes it: the bulk of a snapshot, which a host encodes once for every
    /// joiner until an annotation changes.
    ///
    /// With viewport interest, `view` is the joiner's view (written as `interest`), `annotations`
    /// lists the annotations in its area and `dragsOf` keeps the snapshot's drags to them.
    public static func welcome(
        ref: RequestRef, session: Session, participant: ParticipantID, resumedFrom: UInt64?, annotations: [UInt8],
        view: InterestView? = nil, dragsOf: ((String) -> Bool)? = nil
    ) -> [UInt8] {
        var out = JSONOutput()
        welcomeHead(ref: ref, session: session, participant: participant, resumedFrom: resumedFrom, view: view, into: &out)
        guard resumedFrom == nil else {
            out.raw("}")
            return out.bytes
        }
        out.raw(#","snapshot":{"annotations":"#)
        out.raw(annotations)
        snapshotRest(session, dragsOf: dragsOf, into: &out)
        out.raw("}}")
        return out.bytes
    }

    /// A welcome up to where its snapshot would follow: `{"type":"welcome",…,"resumed":…`,
    /// with `resumedFrom` when resumed. Not closed.
    public static func welcomeHead(
        ref: RequestRef, session: Session, participant: ParticipantID, resumedFrom: UInt64?, view: InterestView? = nil,
        into out: inout JSONOutput
    ) {
        out.raw(#"{"type":"welcome","ref":"#)
        out.ref(ref)
        out.raw(#","session":"#)
        out.string(session.id)
        out.raw(#","epoch":"#)
        out.string(session.epoch)
        out.raw(#","participant":"#)
        out.string(participant)
        out.raw(#","seq":"#)
        out.integer(session.seq)
        out.raw(#","resumed":"#)
        out.bool(resumedFrom != nil)
        if let resumedFrom {
            out.raw(#","resumedFrom":"#)
            out.integer(resumedFrom)
        }
        if let view {
            out.raw(#","interest":"#)
            out.interestView(view)
        }
    }

    /// Everything a client needs to draw the session as of `session.seq`, as JSON text.
    public static func snapshotJSON(_ s: Session) -> [UInt8] {
        var out = JSONOutput()
        out.raw(#"{"annotations":"#)
        out.raw(annotationsJSON(s))
        snapshotRest(s, into: &out)
        out.raw("}")
        return out.bytes
    }

    /// Everything a client needs to draw the session as of `session.seq`.
    public static func snapshot(_ s: Session) -> JSONValue {
        JSONValue.parse(snapshotJSON(s)) ?? .null
    }

    /// The session's annotations in stacking order, encoded as in a snapshot.
    public static func annotationsJSON(_ s: Session) -> [UInt8] {
        annotationsJSON(s.orderedAnnotations)
    }

    /// The snapshot's fields after `annotations`, in alphabetical order, each preceded by a comma.
    /// `dragsOf`, when given, keeps only the drags of the annotations it accepts.
    public static func snapshotRest(_ s: Session, dragsOf: ((String) -> Bool)? = nil, into out: inout JSONOutput) {
        out.raw(#","callout":"#)
        if let c = s.callout { out.callout(c) } else { out.raw("null") }
        out.raw(#","calloutBy":"#)
        out.string(orNull: s.calloutShownBy)
        out.raw(#","cameraLease":"#)
        out.string(orNull: s.cameraLeaseHolder)
        out.raw(#","drags":"#)
        out.drags(of: s, where: dragsOf)
        out.raw(#","participants":["#)
        for (i, p) in s.visibleParticipants.enumerated() {
            if i > 0 { out.raw(",") }
            out.participant(p)
        }
        out.raw(#"],"seq":"#)
        out.integer(s.seq)
        out.raw(#","settings":"#)
        out.settings(s.settings)
        out.raw(#","sharedCamera":"#)
        out.camera(orNull: s.sharedCamera)
    }

    /// After a resume: the current transient state (cameras, locations, live
    /// drag coordinates) the client may have missed, since transient frames
    /// are not replayed.
    public static func live(_ s: Session) -> [UInt8] {
        var out = JSONOutput()
        out.raw(#"{"type":"live","seq":"#)
        out.integer(s.seq)
        out.raw(#","sharedCamera":"#)
        out.camera(orNull: s.sharedCamera)
        out.raw(#","participants":["#)
        for (i, p) in s.visibleParticipants.enumerated() {
            if i > 0 { out.raw(",") }
            out.raw(#"{"camera":"#)
            out.camera(orNull: p.camera)
            out.raw(#","id":"#)
            out.string(p.id)
            out.raw(#","location":"#)
            out.location(orNull: p.location)
            out.raw(#","viewport":"#)
            if let v = p.viewport { out.viewport(v) } else { out.raw("null") }
            out.raw("}")
        }
        out.raw(#"],"annotations":["#)
        var first = true
        for id in s.drags.keys.sorted() {
            guard let point = s.annotations[id]?.point else { continue }
            if !first { out.raw(",") }
            first = false
            out.raw(#"{"coordinate":"#)
            out.coordinate(point.coordinate)
            out.raw(#","id":"#)
            out.string(id)
            out.raw("}")
        }
        out.raw("]}")
        return out.bytes
    }
}
