import MeridianCore

/// A request of the session API (`Protocol/openapi.yaml`), decoded and checked: what it asks
/// of which session. Nothing here reads storage or tokens; the hub does that with the result.
public enum APIRequest: Hashable, Sendable {
    /// `GET /api/sessions`
    case list
    /// `POST /api/sessions`
    case create(id: String, settings: SettingsPatch?)
    /// `GET /api/sessions/{id}`
    case read(id: String)
    /// `DELETE /api/sessions/{id}`
    case delete(id: String)
    /// `PATCH /api/sessions/{id}/settings`
    case configure(id: String, settings: SettingsPatch)
    /// `GET /api/sessions/{id}/events`
    case events(id: String, EventLogQuery)
    /// `GET /api/sessions/{id}/rates`
    case rates(id: String)

    /// The session the request is about (nil for the list).
    public var session: String? {
        switch self {
        case .list: nil
        case .create(let id, _), .read(let id), .delete(let id), .configure(let id, _), .events(let id, _), .rates(let id): id
        }
    }

    /// The path of the request as `Protocol/openapi.yaml` names it, e.g. `/api/sessions/{id}`.
    public var template: String {
        switch self {
        case .list, .create: APIRoute.collection.template
        case .read, .delete: APIRoute.session("").template
        case .configure: APIRoute.settings("").template
        case .events: APIRoute.events("").template
        case .rates: APIRoute.rates("").template
        }
    }

    /// True for the requests that change nothing (a reading token may make them).
    public var reads: Bool {
        switch self {
        case .list, .read, .events, .rates: true
        case .create, .delete, .configure: false
        }
    }

    /// The request under `/api/sessions` that `method`, `path`, `query` and `body` make, or why it
    /// is refused: 404 for a path the API does not have, 405 (with the methods it has) for a
    /// method the path does not answer, 400 for a malformed id, query or body. Nil when `path`
    /// is not under `/api/sessions` at all.
    ///
    /// Total over every input (no trap, whatever the bytes): the fuzzer `FuzzHTTP` holds it to that.
    public static func decode(method: String, path: String, query: String, body: [UInt8]) -> Result<APIRequest, APIRefusal>? {
        guard let route = APIRoute(path: path) else { return nil }
        if route == .notFound { return .failure(APIRefusal(404, "not_found", "no such path: \(quoted(path))")) }
        let name = String(method.prefix(16))
        guard route.allow.contains(method) else {
            let use = route.allow.count == 1 ? route.allow[0] : route.allow.joined(separator: " or ")
            return .failure(APIRefusal(405, "method_not_allowed", "\(name) \(route.template): use \(use)", allow: route.allow))
        }
        switch route {
        case .collection:
            guard method == "POST" else { return .success(.list) }
            return APIBody.create(body).map { .create(id: $0.id, settings: $0.settings) }
        case .session(let id), .settings(let id), .events(let id), .rates(let id):
            guard SessionID.isValid(id) else { return .failure(SessionID.refusal(id)) }
            switch (route, method) {
            case (.session, "GET"): return .success(.read(id: id))
            case (.session, _): return .success(.delete(id: id))
            case (.settings, _): return APIBody.settings(body).map { .configure(id: id, settings: $0) }
            case (.rates, _): return .success(.rates(id: id))
            default: return EventLogQuery.parse(query).map { .events(id: id, $0) }
            }
        case .notFound:
            return .failure(APIRefusal(404, "not_found", "no such path: \(quoted(path))"))
        }
    }
}

/// The paths of the API, and the methods each answers.
enum APIRoute: Equatable {
    case collection
    case session(String)
    case settings(String)
    case events(String)
    case rates(String)
    case notFound

    /// The route of `path`; nil when it is not `/api/sessions` or below it.
    init?(path: String) {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count >= 3, parts[0].isEmpty, parts[1] == "api", parts[2] == "sessions" else { return nil }
        switch parts.count {
        case 3: self = .collection
        case 4: self = .session(String(parts[3]))
        case 5 where parts[4] == "settings": self = .settings(String(parts[3]))
        case 5 where parts[4] == "events": self = .events(String(parts[3]))
        case 5 where parts[4] == "rates": self = .rates(String(parts[3]))
        default: self = .notFound
        }
    }

    /// The methods the path answers, as its `Allow` header lists them.
    var allow: [String] {
        switch self {
        case .collection: ["GET", "POST"]
        case .session: ["GET", "DELETE"]
        case .settings: ["PATCH"]
        case .events, .rates: ["GET"]
        case .notFound: []
        }
    }

    var template: String {
        switch self {
        case .collection: "/api/sessions"
        case .session: "/api/sessions/{id}"
        case .settings: "/api/sessions/{id}/settings"
        case .events: "/api/sessions/{id}/events"
        case .rates: "/api/sessions/{id}/rates"
        case .notFound: "?"
        }
    }
}
