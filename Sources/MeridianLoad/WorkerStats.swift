import Histogram

/// One worker's counters and histograms. Owned by its service thread; copied out under a lock
/// for progress lines and read directly once the thread has ended.
struct WorkerStats: Sendable {
    var connected = 0
    var messagesIn: UInt64 = 0
    var messagesOut: UInt64 = 0
    /// Events received inside the measurement window.
    var deliveries: UInt64 = 0
    var lost: UInt64 = 0
    var outOfOrder: UInt64 = 0
    var duplicates: UInt64 = 0
    /// Drag moves received inside the window, and moves of drags a receiver watched that it never
    /// got (skipped numbers in the move counter each move carries: conflated by the server).
    var movesReceived: UInt64 = 0
    var movesConflated: UInt64 = 0
    var dragsGranted: UInt64 = 0
    var dragsRefused: UInt64 = 0
    var churned: UInt64 = 0
    var connectFailures: UInt64 = 0
    var errors: [String: UInt64] = [:]
    var closeCodes: [String: UInt64] = [:]
    /// Send-to-receipt latency of drag moves, microseconds.
    var latency = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
    /// Connect start to welcome received, microseconds.
    var joinLatency = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
    /// Highest discrete seq each session reached, as seen by this worker's clients.
    var sessionSeq: [Int: UInt64] = [:]

    mutating func merge(_ o: WorkerStats) {
        connected += o.connected
        messagesIn += o.messagesIn
        messagesOut += o.messagesOut
        deliveries += o.deliveries
        lost += o.lost
        outOfOrder += o.outOfOrder
        duplicates += o.duplicates
        movesReceived += o.movesReceived
        movesConflated += o.movesConflated
        dragsGranted += o.dragsGranted
        dragsRefused += o.dragsRefused
        churned += o.churned
        connectFailures += o.connectFailures
        errors.merge(o.errors, uniquingKeysWith: +)
        closeCodes.merge(o.closeCodes, uniquingKeysWith: +)
        latency.add(o.latency)
        joinLatency.add(o.joinLatency)
        sessionSeq.merge(o.sessionSeq, uniquingKeysWith: max)
    }
}
