import MeridianCore
import MeridianProtocol
import MeridianTransport

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

    /// Called on every transport tick: the overview's rates, and the overview when it is due.
    func tickOverview(_ server: any Outbound) {
        let board = place.map { ($0.board, hub: $0.hub) }
        overview.tick(sessions, connections: localConnectionCount, node: node, board: board, on: server)
    }

    /// This hub's sessions for the overview, with `rates`.
    func overviewEntries(now: Duration, rates: OverviewFeed.Rates) -> [OverviewEntry] {
        overview.entries(of: sessions, now: now, rates: rates, node: node)
    }

    /// The cluster node's advertised address, which overview entries name.
    private var node: String? { place?.cluster?.configuration.advertise }
}
