import MeridianCore
import MeridianProtocol
import MeridianTransport

/// Welcomes that share their bulk: in a session with many annotations the snapshot's
/// annotation list is sent as fragments of the welcome message that every joiner's queue
/// holds by reference, encoded once until an annotation changes; only the head (ref,
/// participant) and the rest of the snapshot are the joiner's own.
extension SessionHost {
    /// Annotation lists at least this long go out as shared fragments.
    static let sharedAnnotationsThreshold = 16 * 1024
    /// The largest shared fragment: one write, straight from the fragment (the transport writes
    /// frames of 64 KiB and more alone, without copying them).
    static let fragmentSize = 256 * 1024

    /// The frames of a welcome, in order: one frame, or a message in fragments.
    func welcomeFrames(ref: RequestRef, participant: ParticipantID, ledger: SharedFrameLedger) -> [OutboundFrame] {
        let annotations = annotationsJSON()
        guard annotations.count >= Self.sharedAnnotationsThreshold else {
            return [OutboundFrame.encoding {
                $0.raw(ServerMessage.welcome(ref: ref, session: session, participant: participant, resumedFrom: nil, annotations: annotations))
            }]
        }
        let head = OutboundFrame.fragment(first: true, last: false) { out in
            ServerMessage.welcomeHead(ref: ref, session: session, participant: participant, resumedFrom: nil, into: &out)
            out.raw(#","snapshot":{"annotations":"#)
        }
        let tail = OutboundFrame.fragment(first: false, last: true) { out in
            ServerMessage.snapshotRest(session, into: &out)
            out.raw("}}")
        }
        return [head] + annotationFragments(annotations, ledger: ledger) + [tail]
    }

    /// The annotation list cut into continuation fragments, each ending on an ASCII byte so
    /// no fragment splits a character; cached with the list.
    private func annotationFragments(_ annotations: [UInt8], ledger: SharedFrameLedger) -> [OutboundFrame] {
        if let cached = sharedAnnotationFragments { return cached }
        var fragments: [OutboundFrame] = []
        var start = 0
        while start < annotations.count {
            var end = min(start + Self.fragmentSize, annotations.count)
            while end < annotations.count && end > start + 1 && annotations[end - 1] >= 0x80 { end -= 1 }
            let part = Array(annotations[start..<end])
            fragments.append(OutboundFrame.fragment(first: false, last: false, shared: ledger) { $0.raw(part) })
            start = end
        }
        sharedAnnotationFragments = fragments
        return fragments
    }

    /// Welcomes `connection`, which just joined as `pid` (`events`: its join's, the session at
    /// seq `before` until then). Fresh: the snapshot, its members told. Resumed (`resume` of
    /// this epoch, still in history): the events it missed, then `live`.
    func welcome(
        _ connection: ConnectionID, as pid: ParticipantID, ref: RequestRef, interest: Interest?, resume: ResumePoint?, before: UInt64,
        events: [Emitted], on server: any Outbound
    ) {
        let missed = resume.flatMap { r in r.epoch == session.epoch ? frames(after: r.seq, upTo: before) : nil }
        if let interest, interest.isNarrowed {
            return welcomeWithInterest(interest, to: connection, as: pid, ref: ref, resume: resume, missed: missed, events: events, on: server)
        }
        guard let missed, let resume else {
            for frame in welcomeFrames(ref: ref, participant: pid, ledger: server.sharedFrames) { server.send(frame, to: connection) }
            return broadcast(events, on: server, excludingConnection: connection)
        }
        server.send(OutboundFrame(text: ServerMessage.welcome(
            ref: ref, session: session, participant: pid, resumedFrom: resume.seq, annotations: [])), to: connection)
        for (_, frame, _) in missed { server.send(frame, to: connection) }
        broadcast(events, on: server)
        server.send(OutboundFrame(text: ServerMessage.live(session)), to: connection)
    }

    /// Welcomes a join with viewport interest. Fresh: a snapshot of what its area holds. Resumed:
    /// the missed events not about one annotation (a `skipped` marker where some were left out),
    /// its own `participant.joined`, `live`, then a complete `interest` message with everything
    /// its area holds now.
    private func welcomeWithInterest(
        _ interest: Interest, to connection: ConnectionID, as pid: ParticipantID, ref: RequestRef,
        resume: ResumePoint?, missed: [(seq: UInt64, frame: OutboundFrame, scoped: Bool)]?, events: [Emitted], on server: any Outbound
    ) {
        let (view, change) = setInterest(interest, of: connection, complete: true)!
        guard let missed, let resume else {
            server.send(filteredWelcome(ref: ref, participant: pid, view: view, entered: change.entered), to: connection)
            broadcast(events, on: server, excludingConnection: connection)
            if view.clusters { sendClusters(to: connection, view: view, on: server) }
            return
        }
        server.send(OutboundFrame(text: ServerMessage.welcome(
            ref: ref, session: session, participant: pid, resumedFrom: resume.seq, annotations: [], view: view)), to: connection)
        var last = resume.seq
        for (seq, frame, scoped) in missed where !scoped {
            if last + 1 < seq { server.send(OutboundFrame(text: ServerMessage.skipped(seq: seq - 1)), to: connection) }
            server.send(frame, to: connection)
            last = seq
        }
        if let end = missed.last?.seq, last < end { server.send(OutboundFrame(text: ServerMessage.skipped(seq: end)), to: connection) }
        broadcast(events, on: server)
        server.send(OutboundFrame(text: ServerMessage.live(session)), to: connection)
        server.send(OutboundFrame(text: ServerMessage.interest(
            seq: session.seq, view: view, entered: change.entered, left: [], complete: true, session: session)), to: connection)
        if view.clusters { sendClusters(to: connection, view: view, on: server) }
    }
}
