import MeridianCore
import MeridianTransport

extension Hub {
    /// HTTP on the WebSocket port besides /healthz and /readyz: /metrics, the API (answered
    /// later when it needs storage), then the configured handler (the dashboard's files).
    func answer(_ request: HTTPRequest, responder: HTTPResponder, on local: any Outbound) {
        if request.path == "/metrics", request.method != "GET" {
            return responder.respond(.methodNotAllowed(request, allow: ["GET"]))
        }
        if let place, place.relay.hubs > 1 {
            // A session's requests are answered on its home hub (of this node: one that another
            // node owns is read from the shared store); the list and the metrics gather every hub's part.
            if let id = HubGather.sessionOfAPIRequest(request), case let home = place.relay.localHome(of: id), home != place.hub {
                return place.relay.post(.http(request, responder), to: home)
            }
            if HubGather.isGathered(request) {
                return gather(HubGather(request: request, responder: responder), on: local)
            }
        }
        if HubGather.isGathered(request) {
            var all = HubGather(request: request, responder: responder)
            all.add(self, on: local)
            return finish(all, on: local)
        }
        if api.answer(request, responder: responder, on: outbound(for: local)) { return }
        responder.respond(configuration.http?(request) ?? .notFound)
    }
}

