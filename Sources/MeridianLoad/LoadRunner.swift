import Foundation

/// Runs a load: seeds, ramps the clients up over `threads` client groups, prints a progress
/// line every second, measures for `duration`, lets messages in flight drain, and reports.
public enum LoadRunner {
    /// Seconds after the window for messages in flight to arrive before loss is counted.
    static let drainSeconds = 1.0

    /// Carries out the load `c` describes and returns its report; `progress` receives each status line.
    /// Throws a ``LoadError`` when the configuration cannot run, seeding fails or the client threads cannot start.
    public static func run(_ c: LoadConfiguration, progress: @escaping (String) -> Void = { _ in }) throws -> LoadReport {
        if c.interest == .viewport, c.movesPerDrag > MoveCoding.maxCityMoves {
            throw LoadError(description: "viewport interest allows at most \(MoveCoding.maxCityMoves) moves per drag")
        }
        if c.annotations > 0 {
            progress("seeding \(c.sessions) session(s) with \(c.annotations) annotations each")
            try Seeder(configuration: c).run()
        }
        let cpuStart = LoadClock.cpuSeconds()
        let threads = max(1, min(c.threads, c.clients))
        let timeline = LoadTimeline(start: LoadClock.nowMicros() + 100_000, configuration: c)
        let workers = (0..<threads).map { w in
            WorkerHandle(configuration: c, timeline: timeline, clientIndices: Array(stride(from: w, to: c.clients, by: threads)))
        }
        do {
            for w in workers { try w.group.start() }
            for w in workers { w.board.release() }
        } catch {
            for w in workers { w.group.stop() }
            throw LoadError.startFailed("\(error)")
        }

        var previous = WorkerStats()
        var previousAt = LoadClock.nowMicros()
        let end = timeline.windowEnd + UInt64(drainSeconds * 1_000_000)
        while LoadClock.nowMicros() < end {
            Thread.sleep(forTimeInterval: min(1, Double(end - LoadClock.nowMicros()) / 1e6))
            var total = WorkerStats()
            for w in workers { total.merge(w.board.snapshot()) }
            let now = LoadClock.nowMicros()
            let dt = max(Double(now - previousAt) / 1e6, 0.001)
            func rate(_ a: UInt64, _ b: UInt64) -> Int { Int(Double(a &- b) / dt) }
            let errors = total.errors.values.reduce(0, +) + total.closeCodes.values.reduce(0, +) + total.connectFailures
            let p50 = total.latency.totalCount == 0 ? 0 : Double(total.latency.valueAtPercentile(50)) / 1000
            let p99 = total.latency.totalCount == 0 ? 0 : Double(total.latency.valueAtPercentile(99)) / 1000
            progress(String(
                format: "conn %d  in %d/s  out %d/s  p50 %.2f ms  p99 %.2f ms  lost %llu  errors %llu",
                total.connected, rate(total.messagesIn, previous.messagesIn), rate(total.messagesOut, previous.messagesOut),
                p50, p99, total.lost, errors))
            previous = total
            previousAt = now
        }

        // Every worker takes its tally before any drops its connections.
        for w in workers { w.board.requestStop() }
        for w in workers { w.board.waitForResult(seconds: 10) }
        var total = WorkerStats()
        var tail: [(session: Int, seq: UInt64)] = []
        for w in workers {
            w.group.stop()
            // Reported at the stop, or at the loop's end (which stop() waited for).
            guard let result = w.board.result else { continue }
            total.merge(result.stats)
            tail += result.clientSeqs
        }
        // Events a client never received by the end (past the drain) count as lost.
        for entry in tail { total.lost += total.sessionSeq[entry.session, default: entry.seq] - entry.seq }
        let cpu = LoadClock.cpuSeconds() - cpuStart
        let wall = Double(LoadClock.nowMicros() - timeline.start) / 1e6
        return LoadReport(
            clients: c.clients, sessions: c.sessions, threads: threads, interest: c.interest.rawValue, durationSeconds: c.duration,
            connected: total.connected, connectFailures: total.connectFailures,
            deliveries: total.deliveries, deliveriesPerSecond: Double(total.deliveries) / max(c.duration, 0.001),
            messagesIn: total.messagesIn, messagesOut: total.messagesOut,
            latencyMs: .init(total.latency), joinMs: .init(total.joinLatency), joinRequestMs: .init(total.joinRequestLatency),
            lost: total.lost,
            movesReceived: total.movesReceived, movesConflated: total.movesConflated,
            conflatedPercent: total.movesConflated == 0 ? 0
                : Double(total.movesConflated) * 100 / Double(total.movesReceived + total.movesConflated),
            movesSent: total.movesSent, movesDelivered: total.movesDelivered,
            deliveriesPerMove: total.movesSent == 0 ? 0 : Double(total.movesDelivered) / Double(total.movesSent),
            movesOutsideCity: total.movesOutsideCity,
            welcomeAnnotations: total.welcomeAnnotations, welcomeAnnotationsOutsideCity: total.welcomeAnnotationsOutsideCity,
            outOfOrder: total.outOfOrder, duplicates: total.duplicates,
            dragsGranted: total.dragsGranted, dragsRefused: total.dragsRefused, churned: total.churned,
            errors: total.errors, closeCodes: total.closeCodes,
            cpuSeconds: cpu, cpuPercent: wall > 0 ? cpu / wall * 100 : 0)
    }
}
