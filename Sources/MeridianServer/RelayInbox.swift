import MeridianTransport

/// What the other hubs posted to a hub and it has not finished with: the messages taken and not
/// served yet (served a slice at a time, see ``Hub/takeRelayed(on:)``) and, at an edge, the
/// latest transient frame relayed for each token still queued, for the next one to replace.
struct RelayInbox {
    /// Messages taken and not served yet, oldest first.
    var backlog: ArraySlice<RelayMessage> = []
    /// Whether a turn to serve the backlog is queued on the hub's thread.
    var resumeQueued = false
    /// The latest transient frame relayed here for each token still in use.
    private(set) var transients: [UInt64: OutboundFrame] = [:]

    /// At an edge: a frame from a home hub, wrapped once (its bytes are not copied) and queued
    /// for the members here, replacing the previous frame of its token where that still waits.
    mutating func queue(_ relayed: RelayedFrame, for members: [ConnectionID], except skip: ConnectionID?, on local: any Outbound) {
        let frame = OutboundFrame(relayed: relayed.frame, ledger: local.sharedFrames)
        let previous = relayed.supersedes.flatMap { transients.removeValue(forKey: $0) }
        if let token = relayed.token { transients[token] = frame }
        if members.count == 1, relayed.token == nil {
            if members[0] != skip { local.send(frame, to: members[0]) }
        } else {
            local.broadcast(frame, to: members, except: skip, superseding: previous, transient: relayed.token != nil)
        }
    }

    /// Forgets the transient frames no queue holds any more. A later frame that supersedes one
    /// of them finds nothing to skip, which is right: it was all written.
    mutating func forgetWrittenTransients() {
        guard !transients.isEmpty else { return }
        transients = transients.filter { $0.value.isQueued }
    }
}
