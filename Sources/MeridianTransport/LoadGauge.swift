/// Whether the loop is light: fewer deliveries a second than a limit, taken over windows of a
/// few milliseconds, and over the current window so far (a burst makes the loop loaded at once,
/// not at the window's end). Light is where a broadcast writes at the end of the pass
/// (``TransportConfiguration/directWritesPerPass``); a loaded loop gathers frames in
/// WRITEABLE instead.
struct LoadGauge {
    /// Deliveries a second below which the loop is light.
    let limit: Int
    /// The window over which the rate is taken.
    let window: Duration
    private var windowStart: Duration = .zero
    private var deliveriesAtWindowStart = 0
    private(set) var isLight = true

    init(limit: Int, window: Duration = .milliseconds(5)) {
        self.limit = limit
        self.window = window
    }

    /// Takes the deliveries counted so far (a running total) at `now`; returns ``isLight``.
    mutating func update(now: Duration, deliveries: Int) -> Bool {
        let elapsed = now - windowStart
        let queued = Double(deliveries - deliveriesAtWindowStart)
        if elapsed >= window {
            isLight = queued < Double(limit) * elapsed.timeInterval
            windowStart = now
            deliveriesAtWindowStart = deliveries
        } else if queued >= Double(limit) * window.timeInterval {
            isLight = false
        }
        return isLight
    }
}
