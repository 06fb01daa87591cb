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
    /// Drag moves sent inside the window, and the receipts of those moves by every client (by the
    /// send time each move carries, so moves in flight at either end of the window count right).
    var movesSent: UInt64 = 0
    var movesDelivered: UInt64 = 0
    /// Big map: drag moves received inside the window of an annotation outside the receiver's city.
    var movesOutsideCity: UInt64 = 0
    /// Big map: seeded annotations in the welcomes' snapshots, and those of them outside the joiner's city.
    var welcomeAnnotations: UInt64 = 0
    var welcomeAnnotationsOutsideCity: UInt64 = 0
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
    /// Join request sent to welcome received, microseconds.
    var joinRequestLatency = Histogram<UInt64>(highestTrackableValue: 60_000_000, numberOfSignificantValueDigits: .three)
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
        movesSent += o.movesSent
        movesDelivered += o.movesDelivered
        movesOutsideCity += o.movesOutsideCity
        welcomeAnnotations += o.welcomeAnnotations
        welcomeAnnotationsOutsideCity += o.welcomeAnnotationsOutsideCity
        dragsGranted += o.dragsGranted
        dragsRefused += o.dragsRefused
        churned += o.churned
        connectFailures += o.connectFailures
        errors.merge(o.errors, uniquingKeysWith: +)
        closeCodes.merge(o.closeCodes, uniquingKeysWith: +)
        latency.add(o.latency)
        joinLatency.add(o.joinLatency)
        joinRequestLatency.add(o.joinRequestLatency)
        sessionSeq.merge(o.sessionSeq, uniquingKeysWith: max)
    }
}
