import MeridianProtocol

/// A connection's rate limit where its requests are served: a token bucket, and the transient
/// requests waiting for a token. A value with no I/O; the hub answers what ``admit(_:limit:at:)``
/// decides.
///
/// Over the limit, a transient request (a camera or drag move, a location, an interest) waits,
/// replacing a waiting one of its kind, which is then answered as conflated; any other request
/// is refused with a retry hint. While requests wait, later ones wait behind them (or are
/// refused), so that requests are served in the order they came.
struct RateGate {
    /// What to do with a request.
    enum Verdict: Equatable {
        /// Served now.
        case now
        /// Waits for a token; `replacing` is the waiting request of its kind it replaced, to be
        /// answered as conflated.
        case waits(replacing: ClientRequest?)
        /// Refused: a token comes in `retryAfterMs`.
        case refused(retryAfterMs: Int)
    }

    private var bucket: TokenBucket?
    /// The transient requests waiting for a token, oldest first, each with its kind.
    private(set) var waiting: [(kind: String, request: ClientRequest)] = []

    mutating func admit(_ request: ClientRequest, limit: RateLimit, at now: Duration) -> Verdict {
        var bucket = self.bucket ?? TokenBucket(limit, now: now)
        defer { self.bucket = bucket }
        if waiting.isEmpty, bucket.take(limit, now: now) { return .now }
        guard let kind = Self.kind(of: request) else { return .refused(retryAfterMs: bucket.retryAfterMs(limit)) }
        let replaced = waiting.firstIndex { $0.kind == kind }.map { waiting.remove(at: $0).request }
        waiting.append((kind, request))
        return .waits(replacing: replaced)
    }

    /// The waiting requests the bucket lets through now, in order.
    mutating func release(limit: RateLimit, at now: Duration) -> [ClientRequest] {
        guard !waiting.isEmpty else { return [] }
        var bucket = self.bucket ?? TokenBucket(limit, now: now)
        var released: [ClientRequest] = []
        while !waiting.isEmpty, bucket.take(limit, now: now) { released.append(waiting.removeFirst().request) }
        self.bucket = bucket
        return released
    }

    /// What a transient request replaces when it waits; nil for requests that never wait.
    static func kind(of request: ClientRequest) -> String? {
        // A view that pans: the newest interest wins.
        if case .interest = request.body { return "interest" }
        guard case .command(let command) = request.body else { return nil }
        switch command {
        case .camera(.shared, .changing, _): return "camera.shared"
        case .camera(.own, .changing, _): return "camera.own"
        case .drag(let id, .dragging, _, _): return "drag:\(id)"
        case .location(.some): return "location"
        default: return nil
        }
    }
}
