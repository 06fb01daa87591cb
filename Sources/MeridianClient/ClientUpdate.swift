import MeridianCore
import MeridianProtocol

/// What the client reports, named after the map SDKs' delegate callbacks. Every update is
/// reported after the mirror (``MeridianClient/state``) has applied it.
public enum ClientUpdate: Hashable, Sendable {
    /// Joined (or rejoined): `resumed` is true when missed events were replayed instead of a snapshot.
    case didConnect(Welcome)
    /// The connection dropped (close code if any); the client is reconnecting. 4012 with the
    /// connection open: the session moved to another node of a cluster and the server joins
    /// this client there in place; a ``didConnect(_:)`` with the new epoch's snapshot follows.
    case didDisconnect(code: UInt16?)
    /// A participant's own camera (`participant`) or the shared camera moved; `isFinal` for `camera.end`.
    case cameraDidChange(target: CameraTarget, participant: String, camera: Camera, isFinal: Bool)
    /// A participant selected an annotation; `showsCallout` when that participant's own callout
    /// shows for it (SPEC §6.4).
    case didSelectAnnotation(participant: String, annotation: String, showsCallout: Bool)
    /// A participant's selection was cleared (it deselected, or the annotation was removed or disabled).
    case didDeselectAnnotation(participant: String)
    /// A drag of an annotation changed state or moved (a `drag` event).
    case dragStateDidChange(DragUpdate)
    /// The shared callout (an §8.9 object) was shown, or replaced, by participant `by`.
    case calloutShown(callout: JSONValue, by: String)
    /// The shared callout was dismissed: `reason` is `hidden`, `annotation_removed`,
    /// `annotation_changed`, `participant_left` or `location_cleared`.
    case calloutHidden(reason: String)
    /// A participant joined (its §8.7 object); joins announced in a batch come as a `presence`
    /// ``sessionEvent(_:)``.
    case participantJoined(JSONValue)
    /// A participant left: `reason` is `left`, `disconnected`, `slow_consumer` or `replaced`.
    case participantLeft(id: String, reason: String)
    /// Any other event (annotations, leases, follow, map load, location, settings, taps).
    case sessionEvent(SequencedEvent)
    /// The transient state was replaced by a `live` message after a resume.
    case liveStateRestored
    /// With viewport interest: annotations entered or left the client's area (the `interest`
    /// message, already applied to the mirror).
    case areaDidChange(JSONValue)
    /// With viewport interest while clustering: the clusters of the client's area (`clusters` message).
    case clustersDidChange(JSONValue)
    /// The server closed the connection with a code after which the client does not reconnect
    /// by itself (SPEC §10): `advice` says why, for the app to show (a newer connection of the
    /// same participant is live, the client broke the protocol, or its token expired and no new
    /// one came). ``didClose`` follows.
    case didStop(code: UInt16, advice: CloseCode.Advice)
    /// The client gave up reconnecting or was closed.
    case didClose
    /// An edit of ``MeridianClient/submit(_:)`` was answered: applied, in conflict with a change
    /// the app had not seen, or refused.
    case editSettled(OfflineEdit, EditOutcome)
}

extension ClientUpdate {
    init(_ e: SequencedEvent) {
        switch e.event {
        case .cameraChanging(let t, let p, let c): self = .cameraDidChange(target: t, participant: p, camera: c, isFinal: false)
        case .cameraEnd(let t, let p, let c, _): self = .cameraDidChange(target: t, participant: p, camera: c, isFinal: true)
        case .selection(let p, let id?, let shows): self = .didSelectAnnotation(participant: p, annotation: id, showsCallout: shows)
        case .selection(let p, nil, _): self = .didDeselectAnnotation(participant: p)
        case .drag(let d): self = .dragStateDidChange(d)
        case .calloutShown(let c, let by): self = .calloutShown(callout: c, by: by)
        case .calloutHidden(let reason): self = .calloutHidden(reason: reason)
        case .participantJoined(let p): self = .participantJoined(p)
        case .participantLeft(let id, let reason): self = .participantLeft(id: id, reason: reason)
        default: self = .sessionEvent(e)
        }
    }
}

/// Receives ``ClientUpdate``s on the client's reader thread, in order.
public protocol MeridianClientDelegate: AnyObject, Sendable {
    /// Called with each update, in order, after the mirror has applied it.
    func client(_ client: MeridianClient, didReceive update: ClientUpdate)
    /// Every event the mirror applied, with its seq (called before the matching update).
    func client(_ client: MeridianClient, didApply event: SequencedEvent)
}

extension MeridianClientDelegate {
    /// Does nothing: implement it only to see every applied event.
    public func client(_ client: MeridianClient, didApply event: SequencedEvent) {}
}
