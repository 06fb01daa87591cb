/// A token bucket on the server's monotonic clock.
struct TokenBucket {
    private var tokens: Double
    private var updated: Duration

    init(_ limit: RateLimit, now: Duration) {
        tokens = Double(limit.burst)
        updated = now
    }

    /// Takes one token if there is one.
    mutating func take(_ limit: RateLimit, now: Duration) -> Bool {
        refill(limit, now: now)
        guard tokens >= 1 else { return false }
        tokens -= 1
        return true
    }

    /// Milliseconds until a token is available (at least 1).
    func retryAfterMs(_ limit: RateLimit) -> Int {
        max(1, Int(((1 - tokens) / limit.perSecond * 1000).rounded(.up)))
    }

    private mutating func refill(_ limit: RateLimit, now: Duration) {
        let elapsed = Double((now - updated).components.seconds) + Double((now - updated).components.attoseconds) / 1e18
        tokens = min(Double(limit.burst), tokens + elapsed * limit.perSecond)
        updated = now
    }
}
