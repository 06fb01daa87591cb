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
        server.send(OutboundFrame(text: ServerMessage.overview(overview.entries(of: sessions, now: server.now, rates: .none, node: node), connections: connections.count)), to: connection)
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

    /// The cluster node's advertised address, which overview entries name.
    var node: String? { place?.cluster?.configuration.advertise }
}
