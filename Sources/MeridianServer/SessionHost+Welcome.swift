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
    /// The largest shared fragment: about one write.
    static let fragmentSize = 64 * 1024

    /// The frames of a welcome, in order: one frame, or a message in fragments.
    func welcomeFrames(ref: RequestRef, participant: ParticipantID, ledger: SharedFrameLedger) -> [OutboundFrame] {
        let annotations = annotationsJSON()
        guard annotations.count >= Self.sharedAnnotationsThreshold else {
            return [OutboundFrame.encoding {
                $0.raw(ServerMessage.welcome(ref: ref, session: session, participant: participant, resumedFrom: nil, annotations: annotations))
            }]
        }
        var head = JSONOutput(reserving: OutboundFrame.headerRoom)
        ServerMessage.welcomeHead(ref: ref, session: session, participant: participant, resumedFrom: nil, into: &head)
        head.raw(#","snapshot":{"annotations":"#)
        var tail = JSONOutput(reserving: OutboundFrame.headerRoom)
        ServerMessage.snapshotRest(session, into: &tail)
        tail.raw("}}")
        return [OutboundFrame(reservedHeader: head.bytes, first: true, last: false)]
            + annotationFragments(annotations, ledger: ledger)
            + [OutboundFrame(reservedHeader: tail.bytes, first: false, last: true)]
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
            var storage = [UInt8](repeating: 0, count: OutboundFrame.headerRoom)
            storage.reserveCapacity(OutboundFrame.headerRoom + end - start)
            storage.append(contentsOf: annotations[start..<end])
            fragments.append(OutboundFrame(reservedHeader: storage, first: false, last: false, shared: ledger))
            start = end
        }
        sharedAnnotationFragments = fragments
        return fragments
    }
}
