import MeridianCore
import MeridianProtocol
import MeridianTransport

/// Subscribers of the server overview and the counters its rates come from.
struct OverviewState {
    var watchers: Set<ConnectionID> = []
    /// When the last overview was sent, and each session's counters then.
    var lastSent: Duration?
    var lastCounts: [String: (requests: Int, deliveries: Int)] = [:]
    /// The last overview sent: a slow watcher only needs the newest.
    var latest: OutboundFrame?
    static let interval: Duration = .seconds(1)
}

extension Hub {
    /// `overview.watch`: ack, then an overview at once and about once a second.
    func watchOverview(_ connection: ConnectionID, ref: RequestRef, on server: any Outbound) {
        overview.watchers.insert(connection)
        let seq = connections[connection].map(seq(of:)) ?? 0
        server.send(OutboundFrame.encoding { ServerMessage.ack(ref: ref, seq: seq, into: &$0) }, to: connection)
        server.send(OutboundFrame(text: ServerMessage.overview(overviewEntries(now: server.now, advance: false), connections: connections.count)), to: connection)
    }

    /// Called on every transport tick; sends the overview when it is due.
    func tickOverview(_ server: any Outbound) {
        let now = server.now
        guard let last = overview.lastSent else {
            // The first interval starts now; sessions count from zero.
            overview.lastSent = now
            return
        }
        if now - last < OverviewState.interval { return }
        guard !overview.watchers.isEmpty else {
            // Nobody watches: only move the rates' starting point.
            overview.lastSent = now
            overview.lastCounts = sessions.mapValues { ($0.requestsIn, $0.deliveriesOut) }
            return
        }
        let entries = overviewEntries(now: now, advance: true)
        let frame = OutboundFrame(text: ServerMessage.overview(entries, connections: connections.count))
        server.broadcast(frame, to: Array(overview.watchers), except: nil, superseding: overview.latest, transient: true)
        overview.latest = frame
    }

    /// One entry per session, sorted by id. With `advance`, the rates cover the
    /// time since the previous advance and the counters are remembered.
    private func overviewEntries(now: Duration, advance: Bool) -> [OverviewEntry] {
        let elapsed = overview.lastSent.map { (now - $0).seconds } ?? 0
        let entries = sessions.keys.sorted().map { id -> OverviewEntry in
            let host = sessions[id]!
            let previous = overview.lastCounts[id] ?? (0, 0)
            let rate = { (count: Int, before: Int) in elapsed > 0 ? Double(count - before) / elapsed : 0 }
            let listed = host.session.visibleParticipants.count
            return OverviewEntry(
                session: id, seq: host.session.seq, participants: listed,
                dashboards: host.hiddenMembers(in: host.session).count,
                annotations: host.session.annotations.count,
                drags: host.session.drags.values.reduce(0) { $0 + $1.drags.count },
                messagesPerSecond: advance ? rate(host.requestsIn, previous.requests) : 0,
                deliveriesPerSecond: advance ? rate(host.deliveriesOut, previous.deliveries) : 0,
                names: host.session.visibleParticipants.prefix(OverviewEntry.maxNames).map(\.name),
                lastActivityMs: lastActivityMs(of: host))
        }
        if advance {
            overview.lastSent = now
            overview.lastCounts = sessions.mapValues { ($0.requestsIn, $0.deliveriesOut) }
        }
        return entries
    }

    /// A drag `starting` refused for a conflict: the session's dashboards see
    /// who was refused and who holds the annotation (the refused client got the error).
    func announceRefusal(_ command: Command, _ error: SessionError, by pid: ParticipantID, in host: SessionHost, on server: any Outbound) {
        guard error.code == .dragConflict, case .drag(let annotation, _, _) = command else { return }
        let watchers = host.hiddenMembers(in: host.session)
        guard !watchers.isEmpty else { return }
        let frame = OutboundFrame(text: ServerMessage.dragRefused(seq: host.session.seq, annotation: annotation, participant: pid, holder: error.holder))
        server.broadcast(frame, to: watchers)
    }
}

private extension Duration {
    var seconds: Double {
        let (s, atto) = components
        return Double(s) + Double(atto) / 1e18
    }
}
