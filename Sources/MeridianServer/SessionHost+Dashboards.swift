import MeridianCore
import MeridianProtocol
import MeridianTransport

/// What a session's dashboards (its hidden members) hear besides its events.
extension SessionHost {
    /// A drag `starting` refused for a conflict: the session's dashboards see
    /// who was refused and who holds the annotation (the refused client got the error).
    func announceRefusal(_ command: Command, _ error: SessionError, by pid: ParticipantID, on server: any Outbound) {
        guard error.code == .dragConflict, case .drag(let annotation, _, _, _) = command else { return }
        let watchers = hiddenMembers(in: session)
        guard !watchers.isEmpty else { return }
        let frame = OutboundFrame(text: ServerMessage.dragRefused(seq: session.seq, annotation: annotation, participant: pid, holder: error.holder))
        server.broadcast(frame, to: watchers)
    }
}
