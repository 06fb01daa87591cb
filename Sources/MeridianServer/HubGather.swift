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
            loaded.merge(hub.api.loadedRows()) { kept, _ in kept }
        case .overview:
            overview += hub.overview.entries(of: hub.sessions, now: local.now, rates: .none, node: hub.node)
            connections += hub.localConnectionCount
        }
        visited += 1
    }

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
}
