import MeridianCore
import MeridianTransport

extension Hub {
    /// HTTP on the WebSocket port besides /healthz and /readyz.
    func httpResponse(to request: HTTPRequest, on server: WebSocketServer) -> HTTPResponse? {
        switch (request.method, request.path) {
        case ("GET", "/metrics"):
            metrics.refresh(server.stats, sessions: sessions.count)
            return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4", body: metrics.shared.exposition())
        default:
            return apiResponse(to: request, on: server)
        }
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
