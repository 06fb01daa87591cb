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
    /// Each session's rates over the last interval (messages, deliveries per second).
    var rates: [String: (messages: Double, deliveries: Double)] = [:]
    /// Among several hubs: sessions were loaded or unloaded since this hub last posted its part
    /// of the overview (``OverviewBoard``), which it then posts again at the next tick.
    var sessionsChanged = true
    /// When the sessions' rate histories were last sampled (every hub samples its own sessions).
    var ratesSampled: Duration?
    static let interval: Duration = .seconds(1)
}

/// The rates an overview's entries carry.
enum OverviewRates {
    /// Over the time since the previous advance, which are remembered with the counters.
    case advance
    /// Those of the last advance (a part of the overview posted again between two of them).
    case latest
    /// None yet (zero).
    case none
}

extension Hub {
    /// `overview.watch`: ack, then an overview at once and about once a second.
    func watchOverview(_ connection: ConnectionID, ref: RequestRef, on server: any Outbound) {
        overview.watchers.insert(connection)
        let seq = connections[connection].map(seq(of:)) ?? 0
        server.send(OutboundFrame.encoding { ServerMessage.ack(ref: ref, seq: seq, into: &$0) }, to: connection)
        if place != nil { return gather(HubGather(.overview(watcher: connection)), on: server) }
        server.send(OutboundFrame(text: ServerMessage.overview(overviewEntries(now: server.now, rates: .none), connections: connections.count)), to: connection)
    }

    /// This hub's own connections (a home also keeps the state of members served elsewhere).
    var localConnectionCount: Int {
        place == nil ? connections.count : connections.keys.reduce(0) { $0 + (isLocal($1) ? 1 : 0) }
    }

    /// Called on every transport tick; sends the overview when it is due.
    func tickOverview(_ server: any Outbound) {
        let now = server.now
        sampleRates(now)
        if let place {
            return tickSharedOverview(now, board: place.board, hub: place.hub, on: server)
        }
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
        let entries = overviewEntries(now: now, rates: .advance)
        let frame = OutboundFrame(text: ServerMessage.overview(entries, connections: connections.count))
        server.broadcast(frame, to: Array(overview.watchers), except: nil, superseding: overview.latest, transient: true)
        overview.latest = frame
    }

    /// Once a second, whether anyone watches: each session's rates since the previous sample.
    private func sampleRates(_ now: Duration) {
        if let last = overview.ratesSampled, now - last < OverviewState.interval { return }
        overview.ratesSampled = now
        for host in sessions.values {
            host.rates.sample(requests: host.requestsIn, deliveries: host.deliveriesOut, at: now)
        }
    }

    /// Among several hubs: every hub posts its sessions to the board, at its first tick, once
    /// an interval (advancing the rates) and whenever its sessions changed (a watcher must
    /// never miss a session another hub holds); each hub sends all of them to its own watchers.
    private func tickSharedOverview(_ now: Duration, board: OverviewBoard, hub: Int, on server: any Outbound) {
        let due: Bool
        if let last = overview.lastSent {
            due = now - last >= OverviewState.interval
        } else {
            // The first interval starts now; sessions count from zero.
            overview.lastSent = now
            due = false
        }
        guard due || overview.sessionsChanged else { return }
        board.post(overviewEntries(now: now, rates: due ? .advance : .latest), connections: localConnectionCount, from: hub)
        overview.sessionsChanged = false
        guard due, !overview.watchers.isEmpty else { return }
        let (entries, connections) = board.all()
        let frame = OutboundFrame(text: ServerMessage.overview(entries, connections: connections))
        server.broadcast(frame, to: Array(overview.watchers), except: nil, superseding: overview.latest, transient: true)
        overview.latest = frame
    }

    /// One entry per session, sorted by id, with `rates`.
    func overviewEntries(now: Duration, rates: OverviewRates) -> [OverviewEntry] {
        let elapsed = overview.lastSent.map { (now - $0).seconds } ?? 0
        let entries = sessions.keys.sorted().map { id -> OverviewEntry in
            let host = sessions[id]!
            let rate: (messages: Double, deliveries: Double)
            switch rates {
            case .advance:
                let previous = overview.lastCounts[id] ?? (0, 0)
                let perSecond = { (count: Int, before: Int) in elapsed > 0 ? Double(count - before) / elapsed : 0 }
                rate = (perSecond(host.requestsIn, previous.requests), perSecond(host.deliveriesOut, previous.deliveries))
            case .latest:
                rate = overview.rates[id] ?? (0, 0)
            case .none:
                rate = (0, 0)
            }
            let listed = host.session.visibleParticipants.count
            return OverviewEntry(
                session: id, seq: host.session.seq, participants: listed,
                dashboards: host.hiddenMembers(in: host.session).count,
                annotations: host.session.annotations.count,
                drags: host.session.drags.values.reduce(0) { $0 + $1.drags.count },
                messagesPerSecond: rate.messages,
                deliveriesPerSecond: rate.deliveries,
                names: host.session.visibleParticipants.prefix(OverviewEntry.maxNames).map(\.name),
                lastActivityMs: lastActivityMs(of: host), node: place?.cluster?.configuration.advertise)
        }
        if case .advance = rates {
            overview.lastSent = now
            overview.lastCounts = sessions.mapValues { ($0.requestsIn, $0.deliveriesOut) }
            overview.rates = Dictionary(uniqueKeysWithValues: entries.map { ($0.session, ($0.messagesPerSecond, $0.deliveriesPerSecond)) })
        }
        return entries
    }

    /// A drag `starting` refused for a conflict: the session's dashboards see
    /// who was refused and who holds the annotation (the refused client got the error).
    func announceRefusal(_ command: Command, _ error: SessionError, by pid: ParticipantID, in host: SessionHost, on server: any Outbound) {
        guard error.code == .dragConflict, case .drag(let annotation, _, _, _) = command else { return }
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

/// The overview of a server with several hubs: each hub's sessions as it last posted them,
/// and in a cluster the other nodes' (``ClusterNode`` brings them from Redis).
final class OverviewBoard: Sendable {
    private let posted: Locked<[Int: (entries: [OverviewEntry], connections: Int)]> = Locked([:])
    private let others: Locked<(entries: [OverviewEntry], connections: Int)> = Locked(([], 0))

    func post(_ entries: [OverviewEntry], connections: Int, from hub: Int) {
        posted.withLock { $0[hub] = (entries, connections) }
    }

    /// The other nodes' sessions and connections.
    func post(otherNodes entries: [OverviewEntry], connections: Int) {
        others.withLock { $0 = (entries, connections) }
    }

    /// This node's hubs' sessions, sorted by id, and their connections.
    func local() -> (entries: [OverviewEntry], connections: Int) {
        posted.withLock { posted in
            (posted.values.flatMap(\.entries).sorted { $0.session < $1.session }, posted.values.reduce(0) { $0 + $1.connections })
        }
    }

    /// Every hub's sessions (every node's), sorted by id, and the connections of all of them. A
    /// session moving between nodes may be listed by both for a moment: the newer (higher seq) is kept.
    func all() -> (entries: [OverviewEntry], connections: Int) {
        let mine = local()
        return withOtherNodes(mine.entries, connections: mine.connections)
    }

    /// `entries` and `connections` of this node with the other nodes' added, sorted by id (the
    /// newer entry of a session listed twice).
    func withOtherNodes(_ entries: [OverviewEntry], connections: Int) -> (entries: [OverviewEntry], connections: Int) {
        let (theirs, theirConnections) = others.withLock { $0 }
        guard !theirs.isEmpty || theirConnections > 0 else { return (entries.sorted { $0.session < $1.session }, connections) }
        var merged: [String: OverviewEntry] = [:]
        for entry in entries + theirs where (merged[entry.session]?.seq ?? 0) <= entry.seq { merged[entry.session] = entry }
        return (merged.values.sorted { $0.session < $1.session }, connections + theirConnections)
    }
}
