import MeridianAPI
import MeridianCore
import MeridianProtocol
import MeridianTransport

extension Hub {
    /// Adds this hub's part and passes the gather on to the next hub, or answers.
    func gather(_ gather: HubGather, on local: any Outbound) {
        var gather = gather
        gather.add(self, on: local)
        guard let place, gather.visited < place.relay.hubs else { return finish(gather, on: local) }
        place.relay.post(.gather(gather), to: (place.hub + 1) % place.relay.hubs)
    }

    func finish(_ gather: HubGather, on local: any Outbound) {
        switch gather.question {
        case .overview(let watcher):
            // The watcher may be on another hub: the routing outbound takes it there. In a cluster
            // the first overview lists every node's sessions too, as the later ones do.
            let (entries, connections) = place?.board.withOtherNodes(gather.overview, connections: gather.connections)
                ?? (gather.overview.sorted { $0.session < $1.session }, gather.connections)
            outbound(for: local).send(OutboundFrame(text: ServerMessage.overview(entries, connections: connections)), to: watcher)
        case .http(let request, let responder) where request.path == "/metrics":
            metrics.refresh(gather.stats, sessions: gather.sessions)
            metrics.refresh(logLinesDropped: configuration.logWriter?.dropped ?? 0)
            if let cluster = place?.cluster { metrics.refresh(cluster.figures) }
            responder.respond(HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4", body: metrics.shared.exposition()))
        case .http(let request, let responder):
            if let denial = gatekeeper.authorizeAPI(request, .list) { return responder.respond(denial) }
            api.listSessions(responder, loaded: gather.loaded)
        }
    }
}
