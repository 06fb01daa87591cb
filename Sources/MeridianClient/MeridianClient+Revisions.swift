import MeridianCore

extension MeridianClient {
    /// Sends `request` made conditional on the annotation it names being still at the revision
    /// the mirror holds (protocol §6.3): an `annotationUpdate`, an `annotationRemove` or a `drag`
    /// with state `starting` without an `ifRevision` of its own gets the mirror's; any other
    /// request is sent as it is. If someone changed the annotation meanwhile (a queued edit
    /// replayed after a reconnect, say) it throws a ``ClientError`` whose ``ClientError/conflict``
    /// holds the annotation as it is now.
    @discardableResult
    public func sendIfUnchanged(_ request: SessionRequest) async throws -> Ack {
        try await send(request.conditional(on: state))
    }
}

extension SessionRequest {
    /// The request with `ifRevision` set to the revision `state` holds for its annotation.
    func conditional(on state: SessionState?) -> SessionRequest {
        switch self {
        case .annotationUpdate(let id, let changes, nil):
            return .annotationUpdate(id: id, changes: changes, ifRevision: state?.revision(of: id))
        case .annotationRemove(let id, nil):
            return .annotationRemove(id: id, ifRevision: state?.revision(of: id))
        case .drag(let id, .starting, let coordinate, nil):
            return .drag(id: id, state: .starting, coordinate: coordinate, ifRevision: state?.revision(of: id))
        default:
            return self
        }
    }
}
