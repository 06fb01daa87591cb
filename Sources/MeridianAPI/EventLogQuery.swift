import MeridianHTTP

/// The query of `GET /api/sessions/{id}/events`: `after` (a position, default 0) and `limit`
/// (1–1000, default 100), each at most once; any other parameter is refused.
public struct EventLogQuery: Hashable, Sendable {
    /// Entries on a page when the query gives no `limit`.
    public static let defaultLimit = 100
    /// The largest `limit` accepted.
    public static let maxLimit = 1_000

    /// The page holds entries with a position above this one (0: from the oldest kept).
    public var after: Int64
    /// Most entries on the page, 1 to ``maxLimit``.
    public var limit: Int

    /// A page of up to `limit` entries after position `after`; the defaults ask for the first page.
    public init(after: Int64 = 0, limit: Int = Self.defaultLimit) {
        self.after = after
        self.limit = limit
    }

    static let request = "GET /api/sessions/{id}/events"

    /// The page asked for, or a 400 `invalid_field` naming the parameter.
    public static func parse(_ query: some StringProtocol) -> Result<EventLogQuery, APIRefusal> {
        var page = EventLogQuery()
        var seen: Set<Substring> = []
        for p in QueryString.parameters(query) {
            guard !p.name.isEmpty else {
                return .failure(APIRefusal(400, "invalid_field", "\(request): a query parameter has no name (\(quoted("=" + (p.value ?? "")))); use after and limit"))
            }
            guard p.name == "after" || p.name == "limit" else {
                return .failure(.invalid(String(p.name), "\(request): unknown query parameter \(quoted(p.name)) (use after and limit)"))
            }
            guard seen.insert(p.name).inserted else {
                return .failure(.invalid(String(p.name), "\(p.name): given more than once"))
            }
            let value = p.value ?? ""
            if p.name == "after" {
                guard let n = QueryString.natural(value) else {
                    return .failure(.invalid("after", "after: a position (an integer from 0 to \(Int64.max)), the next of an earlier page; got \(quoted(value))"))
                }
                page.after = n
            } else {
                guard let n = QueryString.natural(value, max: Int64(maxLimit)), n >= 1 else {
                    return .failure(.invalid("limit", "limit: an integer from 1 to \(maxLimit), got \(quoted(value))"))
                }
                page.limit = Int(n)
            }
        }
        return .success(page)
    }
}
