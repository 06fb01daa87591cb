/// When each phase of a run begins, in ``LoadClock`` microseconds.
struct LoadTimeline: Sendable {
    /// Clients start connecting (spread over the ramp-up).
    let start: UInt64
    let rampMicros: UInt64
    /// Measurement window: deliveries and latencies are counted inside it.
    let windowStart: UInt64
    let windowEnd: UInt64

    init(start: UInt64, configuration c: LoadConfiguration) {
        self.start = start
        rampMicros = UInt64(c.rampUp * 1_000_000)
        windowStart = start + rampMicros + UInt64(c.settle * 1_000_000)
        windowEnd = windowStart + UInt64(c.duration * 1_000_000)
    }

    func connectTime(of index: Int, clients: Int) -> UInt64 {
        start + rampMicros * UInt64(index) / UInt64(max(clients, 1))
    }

    func inWindow(_ now: UInt64) -> Bool { now >= windowStart && now < windowEnd }
}
