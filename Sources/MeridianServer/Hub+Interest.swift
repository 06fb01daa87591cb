import MeridianCore
import MeridianProtocol
import MeridianTransport

extension Hub {
    /// Welcomes a join with viewport interest. Fresh: a snapshot of what its area holds. Resumed:
    /// the missed events not about one annotation (a `skipped` marker where some were left out),
    /// its own `participant.joined`, `live`, then a complete `interest` message with everything
    /// its area holds now.
    func welcomeWithInterest(
        _ interest: Interest, to connection: ConnectionID, as pid: ParticipantID, in host: SessionHost, ref: RequestRef,
        resume: ResumePoint?, missed: [(seq: UInt64, frame: OutboundFrame, scoped: Bool)]?, events: [Emitted], on server: any Outbound
    ) {
        let (view, change) = host.setInterest(interest, of: connection, complete: true)!
        guard let missed, let resume else {
            server.send(host.filteredWelcome(ref: ref, participant: pid, view: view, entered: change.entered), to: connection)
            host.broadcast(events, on: server, excludingConnection: connection)
            if view.clusters { host.sendClusters(to: connection, view: view, on: server) }
            return
        }
        server.send(OutboundFrame(text: ServerMessage.welcome(
            ref: ref, session: host.session, participant: pid, resumedFrom: resume.seq, annotations: [], view: view)), to: connection)
        var last = resume.seq
        for (seq, frame, scoped) in missed where !scoped {
            if last + 1 < seq { server.send(OutboundFrame(text: ServerMessage.skipped(seq: seq - 1)), to: connection) }
            server.send(frame, to: connection)
            last = seq
        }
        if let end = missed.last?.seq, last < end { server.send(OutboundFrame(text: ServerMessage.skipped(seq: end)), to: connection) }
        host.broadcast(events, on: server)
        server.send(OutboundFrame(text: ServerMessage.live(host.session)), to: connection)
        server.send(OutboundFrame(text: ServerMessage.interest(
            seq: host.session.seq, view: view, entered: change.entered, left: [], complete: true, session: host.session)), to: connection)
        if view.clusters { host.sendClusters(to: connection, view: view, on: server) }
    }
}
