import MeridianCore
import MeridianProtocol
import MeridianTransport
import MeridianSync

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
        if place != nil { return gather(HubGather(.overview(watcher: connection)), on: server) }
        server.send(OutboundFrame(text: ServerMessage.overview(overviewEntries(now: server.now, advance: false), connections: connections.count)), to: connection)
    }

    /// This hub's own connections (a home also keeps the state of members served elsewhere).
    var localConnectionCount: Int {
        place == nil ? connections.count : connections.keys.reduce(0) { $0 + (isLocal($1) ? 1 : 0) }
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
        if let board = place?.board {
            // Every hub posts its sessions; each sends all of them to its own watchers.
            board.post(overviewEntries(now: now, advance: true), connections: localConnectionCount, from: place!.hub)
            guard !overview.watchers.isEmpty else { return }
            let (entries, connections) = board.all()
            let frame = OutboundFrame(text: ServerMessage.overview(entries, connections: connections))
            server.broadcast(frame, to: Array(overview.watchers), except: nil, superseding: overview.latest, transient: true)
            overview.latest = frame
            return
        }
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
    func overviewEntries(now: Duration, advance: Bool) -> [OverviewEntry] {
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

/// The overview of a server with several hubs: each hub's sessions as it last posted them.
final class OverviewBoard: Sendable {
    private let posted: Locked<[Int: (entries: [OverviewEntry], connections: Int)]> = Locked([:])

    func post(_ entries: [OverviewEntry], connections: Int, from hub: Int) {
        posted.withLock { $0[hub] = (entries, connections) }
    }

    /// Every hub's sessions, sorted by id, and the connections of all of them.
    func all() -> (entries: [OverviewEntry], connections: Int) {
        posted.withLock { posted in
            (posted.values.flatMap(\.entries).sorted { $0.session < $1.session }, posted.values.reduce(0) { $0 + $1.connections })
        }
    }
}
