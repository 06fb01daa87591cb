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
}
