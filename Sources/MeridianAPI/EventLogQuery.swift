import MeridianHTTP

/// The query of `GET /api/sessions/{id}/events`, each parameter at most once: `after` and
/// `before` (positions), `since` and `until` (times, ms since 1970), `order` (`oldest`, the
/// default, or `newest`) and `limit` (1–1000, default 100); any other parameter is refused.
public struct EventLogQuery: Hashable, Sendable {
    /// Entries on a page when the query gives no `limit`.
    public static let defaultLimit = 100
    /// The largest `limit` accepted.
    public static let maxLimit = 1_000

    /// The page holds entries with a position above this one (0: from the oldest kept).
    public var after: Int64
    /// ... and below this one (nil: up to the newest).
    public var before: Int64?
    /// ... stored at or after this time (ms since 1970).
    public var since: Int64?
    /// ... stored before this time (ms since 1970).
    public var until: Int64?
    /// The newest entries of the range first, instead of the oldest.
    public var newestFirst: Bool
    /// Most entries on the page, 1 to ``maxLimit``.
    public var limit: Int

    /// A page of up to `limit` entries of the range given; the defaults ask for the oldest page.
    public init(after: Int64 = 0, before: Int64? = nil, since: Int64? = nil, until: Int64? = nil, newestFirst: Bool = false,
                limit: Int = Self.defaultLimit) {
        self.after = after
        self.before = before
        self.since = since
        self.until = until
        self.newestFirst = newestFirst
        self.limit = limit
    }

    /// The query written out, every parameter that differs from its default: what ``parse(_:)`` reads back as this value.
    public var queryString: String {
        var parts = ["after=\(after)", "limit=\(limit)"]
        if let before { parts.append("before=\(before)") }
        if let since { parts.append("since=\(since)") }
        if let until { parts.append("until=\(until)") }
        if newestFirst { parts.append("order=newest") }
        return parts.joined(separator: "&")
    }

    static let request = "GET /api/sessions/{id}/events"
    static let names: [Substring] = ["after", "before", "since", "until", "order", "limit"]
    static let use = "use after, before, since, until, order and limit"

    /// The page asked for, or a 400 `invalid_field` naming the parameter.
    public static func parse(_ query: some StringProtocol) -> Result<EventLogQuery, APIRefusal> {
        var page = EventLogQuery()
        var seen: Set<Substring> = []
        for p in QueryString.parameters(query) {
            guard !p.name.isEmpty else {
                return .failure(APIRefusal(400, "invalid_field", "\(request): a query parameter has no name (\(quoted("=" + (p.value ?? "")))); \(use)"))
            }
            guard names.contains(p.name) else {
                return .failure(.invalid(String(p.name), "\(request): unknown query parameter \(quoted(p.name)) (\(use))"))
            }
            guard seen.insert(p.name).inserted else {
                return .failure(.invalid(String(p.name), "\(p.name): given more than once"))
            }
            let value = p.value ?? ""
            switch p.name {
            case "order":
                guard value == "oldest" || value == "newest" else {
                    return .failure(.invalid("order", "order: oldest (the default) or newest, got \(quoted(value))"))
                }
                page.newestFirst = value == "newest"
            case "limit":
                guard let n = QueryString.natural(value, max: Int64(maxLimit)), n >= 1 else {
                    return .failure(.invalid("limit", "limit: an integer from 1 to \(maxLimit), got \(quoted(value))"))
                }
                page.limit = Int(n)
            default:
                let what = p.name == "after" || p.name == "before" ? "a position" : "a time in ms since 1970"
                guard let n = QueryString.natural(value) else {
                    return .failure(.invalid(String(p.name), "\(p.name): \(what) (an integer from 0 to \(Int64.max)); got \(quoted(value))"))
                }
                switch p.name {
                case "after": page.after = n
                case "before": page.before = n
                case "since": page.since = n
                default: page.until = n
                }
            }
        }
        return .success(page)
    }
}
