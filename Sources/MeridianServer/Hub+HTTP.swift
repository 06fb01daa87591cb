import MeridianCore
import MeridianTransport

extension Hub {
    /// HTTP on the WebSocket port besides /healthz and /readyz: /metrics, the API (answered
    /// later when it needs storage), then the configured handler (the dashboard's files).
    func answer(_ request: HTTPRequest, responder: HTTPResponder, on server: WebSocketServer) {
        if request.method == "GET", request.path == "/metrics" {
            metrics.refresh(server.stats, sessions: sessions.count)
            metrics.refresh(logLinesDropped: configuration.logWriter?.dropped ?? 0)
            return responder.respond(HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4", body: metrics.shared.exposition()))
        }
        if apiRequest(request, responder: responder, on: outbound(for: server)) { return }
        responder.respond(configuration.http?(request) ?? .notFound)
    }
}

extension Hub {
    /// Drag starts by policy and outcome: granted, preempted (took over another's drag) or refused.
    func recordDrag(_ command: Command, _ result: ApplyResult, policy: DragPolicy) {
        guard case .drag(_, .starting, _) = command else { return }
        switch result {
        case .success(let accepted):
            let preempted = accepted.events.contains { if case .drag(_, _, _, _, .preempted) = $0.event { true } else { false } }
            metrics.drag(policy: policy, outcome: preempted ? "preempted" : "granted")
        case .failure(let error) where error.code == .dragConflict:
            metrics.drag(policy: policy, outcome: "refused")
        case .failure:
            break
        }
    }
}
