import MeridianAPI
import MeridianCore
import MeridianProtocol
import MeridianTransport

/// What a question about every hub (the session list, /metrics, a new watcher's first
/// overview) collects on its way round them, one hub after the other.
struct HubGather: Sendable {
    enum Question: Sendable {
        case http(HTTPRequest, HTTPResponder)
        /// The first overview of `watcher` (its hub is in its id).
        case overview(watcher: ConnectionID)
    }

    let question: Question
    var stats = TransportStats()
    var sessions = 0
    var loaded: [String: JSONValue] = [:]
    var overview: [OverviewEntry] = []
    var connections = 0
    var visited = 0

    init(_ question: Question) { self.question = question }

    init(request: HTTPRequest, responder: HTTPResponder) { self.init(.http(request, responder)) }

    mutating func add(_ hub: Hub, on local: any Outbound) {
        switch question {
        case .http:
            stats.add(local.transportStats)
            sessions += hub.sessions.count
            loaded.merge(hub.loadedRows()) { kept, _ in kept }
        case .overview:
            overview += hub.overviewEntries(now: local.now, rates: .none)
            connections += hub.localConnectionCount
        }
        visited += 1
    }
}

extension Hub {
    /// The list of sessions and /metrics: answered once every hub added its part.
    static func isGathered(_ request: HTTPRequest) -> Bool {
        request.method == "GET" && (request.path == "/metrics" || request.path == "/api/sessions")
    }

    /// The session an API request is about, when it is about one (the id in the path, or in
    /// the body of a create).
    static func sessionOfAPIRequest(_ request: HTTPRequest) -> String? {
        let parts = request.path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0] == "", parts[1] == "api", parts[2] == "sessions" else { return nil }
        if parts.count >= 4, !parts[3].isEmpty { return String(parts[3]) }
        guard request.method == "POST", case .object(let fields)? = JSONValue.parse(request.body), case .string(let id)? = fields["id"] else {
            return nil
        }
        return id
    }

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
            listSessions(responder, loaded: gather.loaded)
        }
    }
}
