import MeridianCore
import MeridianProtocol
import MeridianSync
import MeridianTransport

/// A hub's part of the server overview (`overview.watch`, Protocol/SPEC.md): who watches, each
/// session's entry with its rates, and when the next overview is due. The hub hands it its
/// sessions and its connection count at each tick; the feed decides what to send, and to whom.
struct OverviewFeed {
    /// The connections watching the overview on this hub.
    var watchers: Set<ConnectionID> = []
    /// When the last overview was sent, and each session's counters then.
    private(set) var lastSent: Duration?
    private var lastCounts: [String: (requests: Int, deliveries: Int)] = [:]
    /// The last overview sent: a slow watcher only needs the newest.
    private var latest: OutboundFrame?
    /// Each session's rates over the last interval (messages, deliveries per second).
    private var rates: [String: (messages: Double, deliveries: Double)] = [:]
    /// Among several hubs: sessions were loaded or unloaded since this hub last posted its part
    /// of the overview (``OverviewBoard``), which it then posts again at the next tick.
    var sessionsChanged = true
    /// When the sessions' rate histories were last sampled (every hub samples its own sessions).
    private var ratesSampled: Duration?
    static let interval: Duration = .seconds(1)

    /// The rates an overview's entries carry.
    enum Rates {
        /// Over the time since the previous advance, which are remembered with the counters.
        case advance
        /// Those of the last advance (a part of the overview posted again between two of them).
        case latest
        /// None yet (zero).
        case none
    }

    /// Called on every transport tick with the hub's sessions: samples their rate histories
    /// once a second and sends the overview when it is due. Alone, the hub's own sessions and
    /// `connections`; among several hubs (`board`), every hub posts its sessions to the board at
    /// its first tick, once an interval (advancing the rates) and whenever its sessions changed
    /// (a watcher must never miss a session another hub holds), and each hub sends all of them
    /// to its own watchers.
    mutating func tick(
        _ sessions: [String: SessionHost], connections: Int, node: String?, board: (OverviewBoard, hub: Int)?, on server: any Outbound
    ) {
        let now = server.now
        sampleRates(sessions, at: now)
        let due: Bool
        if let last = lastSent {
            due = now - last >= Self.interval
        } else {
            // The first interval starts now; sessions count from zero.
            lastSent = now
            due = false
        }
        if let (board, hub) = board {
            guard due || sessionsChanged else { return }
            board.post(entries(of: sessions, now: now, rates: due ? .advance : .latest, node: node), connections: connections, from: hub)
            sessionsChanged = false
            guard due, !watchers.isEmpty else { return }
            let (entries, connections) = board.all()
            return send(ServerMessage.overview(entries, connections: connections), on: server)
        }
        guard due else { return }
        guard !watchers.isEmpty else {
            // Nobody watches: only move the rates' starting point.
            lastSent = now
            lastCounts = sessions.mapValues { ($0.requestsIn, $0.deliveriesOut) }
            return
        }
        send(ServerMessage.overview(entries(of: sessions, now: now, rates: .advance, node: node), connections: connections), on: server)
    }

    /// One entry per session, sorted by id, with `rates`.
    mutating func entries(of sessions: [String: SessionHost], now: Duration, rates: Rates, node: String?) -> [OverviewEntry] {
        let elapsed = lastSent.map { (now - $0).seconds } ?? 0
        let entries = sessions.sorted { $0.key < $1.key }.map { id, host -> OverviewEntry in
            let rate: (messages: Double, deliveries: Double)
            switch rates {
            case .advance:
                let previous = lastCounts[id] ?? (0, 0)
                let perSecond = { (count: Int, before: Int) in elapsed > 0 ? Double(count - before) / elapsed : 0 }
                rate = (perSecond(host.requestsIn, previous.requests), perSecond(host.deliveriesOut, previous.deliveries))
            case .latest:
                rate = self.rates[id] ?? (0, 0)
            case .none:
                rate = (0, 0)
            }
            return OverviewEntry(
                session: id, seq: host.session.seq, participants: host.session.visibleParticipants.count,
                dashboards: host.hiddenMembers(in: host.session).count,
                annotations: host.session.annotations.count,
                drags: host.session.drags.values.reduce(0) { $0 + $1.drags.count },
                messagesPerSecond: rate.messages,
                deliveriesPerSecond: rate.deliveries,
                names: host.session.visibleParticipants.prefix(OverviewEntry.maxNames).map(\.name),
                lastActivityMs: host.eventLog?.lastActivityMs, node: node)
        }
        if case .advance = rates {
            lastSent = now
            lastCounts = sessions.mapValues { ($0.requestsIn, $0.deliveriesOut) }
            self.rates = Dictionary(uniqueKeysWithValues: entries.map { ($0.session, ($0.messagesPerSecond, $0.deliveriesPerSecond)) })
        }
        return entries
    }

    /// Once a second, whether anyone watches: each session's rates since the previous sample.
    private mutating func sampleRates(_ sessions: [String: SessionHost], at now: Duration) {
        if let last = ratesSampled, now - last < Self.interval { return }
        ratesSampled = now
        for host in sessions.values {
            host.rates.sample(requests: host.requestsIn, deliveries: host.deliveriesOut, at: now)
        }
    }

    /// The overview to every watcher, replacing the previous one where it is still unsent.
    private mutating func send(_ text: [UInt8], on server: any Outbound) {
        let frame = OutboundFrame(text: text)
        server.broadcast(frame, to: Array(watchers), except: nil, superseding: latest, transient: true)
        latest = frame
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
