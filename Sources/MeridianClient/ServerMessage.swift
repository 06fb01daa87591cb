import MeridianCore
import MeridianProtocol

/// The `welcome` answer to a join (§7.2).
public struct Welcome: Hashable, Sendable {
    /// The id of the session joined.
    public var session: String
    /// The session's epoch (§3): changes whenever the session is loaded anew; a seq is meaningful
    /// only with it.
    public var epoch: String
    /// The participant id of this connection (the token's `sub` with a token; a new one at each
    /// reconnect without).
    public var participant: String
    /// The session seq after the join.
    public var seq: UInt64
    /// True when the join resumed: the missed events follow instead of a snapshot (§4.4).
    public var resumed: Bool
    /// The snapshot object (nil when resumed).
    public var snapshot: JSONValue?
    /// The joiner's view with viewport interest (§4.7); nil with everything-interest.
    public var interest: JSONValue? = nil
}

/// A message from the server (§7), typed.
enum IncomingMessage: Hashable, Sendable {
    case welcome(ref: JSONValue, Welcome)
    case ack(ref: JSONValue, seq: UInt64, camera: Camera?)
    case error(ref: JSONValue, ClientError)
    case event(SequencedEvent)
    /// The transient state after a resume (§7.3), kept as JSON.
    case live(JSONValue)
    /// Viewport interest (§7.6): what entered and left the client's area, a stretch of seqs
    /// outside it, and clusters.
    case area(JSONValue)
    case skipped(UInt64)
    case clusters(JSONValue)
    /// The session moved to another node of a cluster: the server joins this connection again
    /// in place, and the answer carries `ref` (§4.4.1).
    case moved(ref: JSONValue, session: String, reason: String)

    static func decode(_ text: String) throws(ClientError) -> IncomingMessage {
        guard let m = JSONValue.parse(Array(text.utf8)), let type = m["type"]?.stringValue else {
            throw .protocolViolation("not a JSON object with a type: \(text.prefix(200))")
        }
        let ref = m["ref"] ?? .null
        switch type {
        case "welcome":
            guard let session = m["session"]?.stringValue, let epoch = m["epoch"]?.stringValue,
                  let participant = m["participant"]?.stringValue, let seq = m["seq"]?.uint64Value else {
                throw .protocolViolation("incomplete welcome")
            }
            return .welcome(ref: ref, Welcome(
                session: session, epoch: epoch, participant: participant, seq: seq,
                resumed: m["resumed"]?.boolValue ?? false, snapshot: m["snapshot"]?.nonNull, interest: m["interest"]?.nonNull))
        case "ack":
            return .ack(ref: ref, seq: m["seq"]?.uint64Value ?? 0, camera: m["camera"]?.cameraValue)
        case "error":
            let code = m["code"]?.stringValue ?? "", message = m["message"]?.stringValue ?? ""
            if code == "revision_conflict", let revision = m["revision"]?.uint64Value, let annotation = m["annotation"] {
                return .error(ref: ref, .revisionConflict(message: message, revision: revision, annotation: annotation))
            }
            return .error(ref: ref, .rejected(code: code, message: message, field: m["field"]?.stringValue, holder: m["holder"]?["id"]?.stringValue))
        case "live":
            return .live(m)
        case "interest":
            return .area(m)
        case "skipped":
            guard let seq = m["seq"]?.uint64Value else { throw .protocolViolation("skipped without seq") }
            return .skipped(seq)
        case "clusters":
            return .clusters(m)
        case "moved":
            return .moved(ref: ref, session: m["session"]?.stringValue ?? "", reason: m["reason"]?.stringValue ?? "")
        default:
            guard let seq = m["seq"]?.uint64Value, let event = SessionEvent.decode(type, m) else {
                throw .protocolViolation("unknown or incomplete event \(type)")
            }
            return .event(SequencedEvent(seq: seq, isTransient: m["transient"]?.boolValue ?? false, event: event))
        }
    }
}
