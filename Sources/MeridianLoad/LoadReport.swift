import Foundation
import Histogram

/// The outcome of a run (`meridian load --json` prints it as JSON).
public struct LoadReport: Codable, Sendable {
    /// A latency distribution: its sample count and percentiles, in milliseconds (all 0 with no samples).
    public struct Percentiles: Codable, Sendable {
        /// Samples recorded.
        public var count: UInt64
        /// Median, milliseconds.
        public var p50: Double
        /// 90th percentile, milliseconds.
        public var p90: Double
        /// 99th percentile, milliseconds.
        public var p99: Double
        /// 99.9th percentile, milliseconds.
        public var p999: Double
        /// Largest sample, milliseconds.
        public var max: Double

        init(_ h: Histogram<UInt64>) {
            func ms(_ micros: UInt64) -> Double { Double(micros) / 1000 }
            count = h.totalCount
            p50 = count == 0 ? 0 : ms(h.valueAtPercentile(50))
            p90 = count == 0 ? 0 : ms(h.valueAtPercentile(90))
            p99 = count == 0 ? 0 : ms(h.valueAtPercentile(99))
            p999 = count == 0 ? 0 : ms(h.valueAtPercentile(99.9))
            max = count == 0 ? 0 : ms(h.max)
        }
    }

    /// Simulated clients configured.
    public var clients: Int
    /// Sessions the clients were spread over.
    public var sessions: Int
    /// Client threads used (never more than one per client).
    public var threads: Int
    /// `everything`, or `viewport`: a big map, each client watching its own city (``LoadInterest``).
    public var interest: String
    /// Length of the measurement window, seconds.
    public var durationSeconds: Double
    /// Connections open at the end of the window.
    public var connected: Int
    /// Connection attempts that failed before the connection opened.
    public var connectFailures: UInt64
    /// Events received by all clients in the window.
    public var deliveries: UInt64
    /// `deliveries` per second of the window.
    public var deliveriesPerSecond: Double
    /// Messages received by all clients over the whole run (welcomes, answers and events).
    public var messagesIn: UInt64
    /// Messages sent by all clients over the whole run.
    public var messagesOut: UInt64
    /// Drag move send-to-receipt latency, milliseconds.
    public var latencyMs: Percentiles
    /// Connect start to welcome (with its snapshot), milliseconds.
    public var joinMs: Percentiles
    /// Join request sent to welcome received (the server's part of a join), milliseconds.
    public var joinRequestMs: Percentiles
    /// Events a client never received: gaps in the seqs it followed, and (everything-interest) the events it still lacked after the drain.
    public var lost: UInt64
    /// Drag moves received in the window, and moves of watched drags never received (the server
    /// conflated them); `conflatedPercent` = conflated / (received + conflated).
    public var movesReceived: UInt64
    /// Moves of watched drags never received in the window (the server conflated them).
    public var movesConflated: UInt64
    /// `movesConflated` as a percentage of received plus conflated moves.
    public var conflatedPercent: Double
    /// Drag moves sent in the window; receipts of those moves by all clients (in the window or the
    /// drain after it); and `movesDelivered / movesSent`: how many clients each move reached
    /// (every client with everything-interest, less what was conflated; its city's on a big map).
    public var movesSent: UInt64
    /// Receipts, by all clients, of the moves sent in the window (in the window or the drain after it).
    public var movesDelivered: UInt64
    /// `movesDelivered / movesSent`: how many clients each move reached (0 when none was sent).
    public var deliveriesPerMove: Double
    /// Big map: moves received of an annotation outside the receiver's city; seeded annotations in
    /// the welcomes' snapshots, and those of them outside the joiner's city. Zero otherwise.
    public var movesOutsideCity: UInt64
    /// Big map: seeded annotations in the welcomes' snapshots (zero otherwise).
    public var welcomeAnnotations: UInt64
    /// Big map: those of the welcomes' seeded annotations that lie outside the joiner's city (zero otherwise).
    public var welcomeAnnotationsOutsideCity: UInt64
    /// Events that arrived with a seq below one the client had already seen.
    public var outOfOrder: UInt64
    /// Discrete events that arrived a second time with the seq the client had just seen.
    public var duplicates: UInt64
    /// Drag `starting` requests the server acknowledged.
    public var dragsGranted: UInt64
    /// Drag `starting` requests refused with `drag_conflict` (another dragger held the annotation).
    public var dragsRefused: UInt64
    /// Clients that left and joined again as a new participant (``LoadConfiguration/churnRate``).
    public var churned: UInt64
    /// Error answers received, by error code (besides the expected `already_exists` and `drag_conflict`).
    public var errors: [String: UInt64]
    /// Connections the server closed during the run, by close code ("none": closed without one).
    public var closeCodes: [String: UInt64]
    /// CPU used by the load generator itself over the run (user + system), seconds and % of one core.
    public var cpuSeconds: Double
    /// `cpuSeconds` as a percentage of one core over the run's wall-clock time.
    public var cpuPercent: Double

    /// The report as pretty-printed JSON with sorted keys.
    public var json: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// The report as human-readable lines: counts, rates, latency percentiles, errors and close codes.
    public var text: String {
        func f(_ x: Double) -> String { String(format: "%.3f", x) }
        let l = latencyMs, j = joinMs, r = joinRequestMs
        return """
        clients \(clients) in \(sessions) session(s), \(threads) thread(s), \(interest) interest, window \(f(durationSeconds)) s
        connected \(connected), connect failures \(connectFailures), churned \(churned)
        deliveries \(deliveries) (\(Int(deliveriesPerSecond))/s), messages in \(messagesIn), out \(messagesOut)
        latency ms (\(l.count) samples): p50 \(f(l.p50)) p90 \(f(l.p90)) p99 \(f(l.p99)) p99.9 \(f(l.p999)) max \(f(l.max))
        join→snapshot ms (\(j.count)): p50 \(f(j.p50)) p90 \(f(j.p90)) p99 \(f(j.p99)) max \(f(j.max))
        join request→welcome ms (\(r.count)): p50 \(f(r.p50)) p90 \(f(r.p90)) p99 \(f(r.p99)) max \(f(r.max))
        lost \(lost), out of order \(outOfOrder), duplicates \(duplicates)
        drag moves received \(movesReceived), conflated \(movesConflated) (\(f(conflatedPercent))%)
        drag moves sent \(movesSent), delivered \(movesDelivered) (\(f(deliveriesPerMove)) per move)
        outside the receiver's city: moves \(movesOutsideCity); welcome annotations \(welcomeAnnotationsOutsideCity) of \(welcomeAnnotations)
        drags granted \(dragsGranted), refused \(dragsRefused)
        errors \(errors.isEmpty ? "none" : errors.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
        close codes \(closeCodes.isEmpty ? "none" : closeCodes.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
        load generator CPU \(f(cpuSeconds)) s (\(Int(cpuPercent))% of one core)
        """
    }
}
