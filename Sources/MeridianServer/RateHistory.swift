import MeridianCore

/// A session's recent rates, one sample a second: requests received from its members and
/// frames queued for them, per second, oldest first. A dashboard opened on the session
/// shows the last minute at once (`GET /api/sessions/{id}/rates`) instead of only what
/// arrives after it opened.
struct RateHistory {
    /// Samples kept: a minute at one a second.
    static let capacity = 60

    private(set) var messagesPerSecond: [Double] = []
    private(set) var deliveriesPerSecond: [Double] = []
    /// The counters at the previous sample and when it was taken; nil before the first.
    private var previous: (requests: Int, deliveries: Int, at: Duration)?

    /// Records the rates since the previous sample (the first call only sets the start).
    mutating func sample(requests: Int, deliveries: Int, at now: Duration) {
        defer { previous = (requests, deliveries, now) }
        guard let previous, now > previous.at else { return }
        let (s, atto) = (now - previous.at).components
        let elapsed = Double(s) + Double(atto) / 1e18
        append(Double(requests - previous.requests) / elapsed, to: &messagesPerSecond)
        append(Double(deliveries - previous.deliveries) / elapsed, to: &deliveriesPerSecond)
    }

    private func append(_ value: Double, to values: inout [Double]) {
        values.append(value.isFinite ? (max(0, value) * 10).rounded() / 10 : 0)
        if values.count > Self.capacity { values.removeFirst(values.count - Self.capacity) }
    }

    /// `{"session", "interval", "messagesPerSecond", "deliveriesPerSecond"}`, as `Protocol/openapi.yaml` describes it.
    func json(session: String) -> JSONValue {
        .object([
            "session": .string(session), "interval": .number(1),
            "messagesPerSecond": .array(messagesPerSecond.map(JSONValue.number)),
            "deliveriesPerSecond": .array(deliveriesPerSecond.map(JSONValue.number)),
        ])
    }
}
