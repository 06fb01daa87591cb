import MeridianCore
import MeridianProtocol
import MeridianStorage
import MeridianTransport
import Prometheus

/// The server's Prometheus metrics, served at `GET /metrics`. Each server has its own registry
/// (no global bootstrap); every series of ``MetricCatalog`` is there from the start, with its
/// help text, and every label has a fixed set of values: never a session id.
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    let commitLatency: DurationHistogram
    let batchSize: ValueHistogram
    let commitFailures: Counter

    init() {
        commitLatency = registry.makeDurationHistogram(
            name: "meridian_storage_commit_seconds",
            buckets: [.microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
                      .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1)],
            help: Self.help("meridian_storage_commit_seconds"))
        batchSize = registry.makeValueHistogram(
            name: "meridian_storage_batch_size", buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000],
            help: Self.help("meridian_storage_batch_size"))
        commitFailures = registry.makeCounter(name: "meridian_storage_commit_failures_total", labels: [], help: Self.help("meridian_storage_commit_failures_total"))
        for name in MetricCatalog.plainCounters { _ = counter(name) }
        for (name, sets) in MetricCatalog.labelled { for labels in sets { _ = counter(name, labels) } }
    }

    /// The counter of `name` and `labels`, made the first time it is asked for.
    func counter(_ name: String, _ labels: [(String, String)] = []) -> Counter {
        registry.makeCounter(name: name, labels: labels, help: Self.help(name))
    }

    /// The gauge of `name`, made the first time it is asked for.
    func gauge(_ name: String) -> Gauge {
        registry.makeGauge(name: name, labels: [], help: Self.help(name))
    }

    private static func help(_ name: String) -> String {
        guard let help = MetricCatalog.help[name] else { preconditionFailure("\(name) is not in MetricCatalog") }
        return help
    }

    /// The series a cluster node adds, at zero.
    func addClusterSeries() {
        for name in MetricCatalog.clusterGauges { _ = gauge(name) }
        for name in MetricCatalog.clusterCounters { _ = counter(name) }
        for (name, sets) in MetricCatalog.clusterLabelled { for labels in sets { _ = counter(name, labels) } }
    }

    /// Called by the storage writer after each transaction.
    func record(_ batch: StorageWriter.Batch) {
        commitLatency.record(batch.duration)
        batchSize.record(Double(batch.changes))
        if batch.failed { commitFailures.increment() }
    }

    /// The Prometheus text exposition.
    func exposition() -> [UInt8] {
        var out: [UInt8] = []
        registry.emit(into: &out)
        return out
    }
}

/// Metrics the hub updates on the service thread: counters cached per label value.
final class HubMetrics {
    let shared: ServerMetrics
    private var counters: [String: Counter] = [:]
    private let connections: Gauge
    private let sessionsLoaded: Gauge
    private let queuedBytes: Gauge
    private let messagesWaiting: Gauge
    private var lastStats = TransportStats()
    private var lastCluster = ClusterFigures()

    init(_ shared: ServerMetrics) {
        self.shared = shared
        connections = shared.gauge("meridian_connections")
        sessionsLoaded = shared.gauge("meridian_sessions_loaded")
        queuedBytes = shared.gauge("meridian_queue_bytes")
        messagesWaiting = shared.gauge("meridian_input_waiting_messages")
    }

    func count(_ name: String, _ dimensions: [(String, String)] = [], by amount: Int = 1) {
        guard amount > 0 else { return }
        let key = name + dimensions.map { "|\($0.0)=\($0.1)" }.joined()
        let counter = counters[key] ?? {
            let c = shared.counter(name, dimensions)
            counters[key] = c
            return c
        }()
        counter.increment(by: Int64(amount))
    }

    /// Counters of one label, by value: a per-message count costs one lookup of a short key
    /// (``count(_:_:by:)`` builds its key from the name and every label first).
    private var messagesIn: [String: Counter] = [:]
    private var errors: [String: Counter] = [:]
    private var rateLimits: [Bool: Counter] = [:]

    private func increment<Key: Hashable>(_ cache: inout [Key: Counter], _ key: Key, _ make: () -> Counter) {
        if let counter = cache[key] { return counter.increment() }
        let counter = make()
        cache[key] = counter
        counter.increment()
    }

    /// The counter of the last type counted in: a client mostly sends one type in a row (drag
    /// moves), and comparing two short strings costs less than hashing one.
    private var lastIn: (type: String, counter: Counter)?

    func messageIn(_ type: String) {
        if let lastIn, lastIn.type == type { return lastIn.counter.increment() }
        increment(&messagesIn, type) { shared.counter("meridian_messages_in_total", [("type", type)]) }
        lastIn = (type, messagesIn[type]!)
    }
    func error(_ code: SessionError.Code) {
        increment(&errors, code.rawValue) { shared.counter("meridian_errors_total", [("code", code.rawValue)]) }
    }
    /// A request over its connection's rate limit: conflated (transient) or refused.
    func rateLimited(conflated: Bool) {
        increment(&rateLimits, conflated) {
            shared.counter("meridian_rate_limited_total", [("outcome", conflated ? "conflated" : "refused")])
        }
    }
    func connectionEvent(_ event: String) { count("meridian_connection_events_total", [("event", event)]) }
    /// A drag `starting` by policy and outcome: granted, preempted (took over another's drag) or
    /// refused for a conflict; any other command or refusal counts nothing.
    func dragStart(_ command: Command, _ result: ApplyResult, policy: DragPolicy) {
        guard case .drag(_, .starting, _, _) = command else { return }
        let outcome: String
        switch result {
        case .success(let accepted):
            let preempted = accepted.events.contains { if case .drag(_, _, _, _, .preempted) = $0.event { true } else { false } }
            outcome = preempted ? "preempted" : "granted"
        case .failure(let error) where error.code == .dragConflict:
            outcome = "refused"
        case .failure:
            return
        }
        count("meridian_drag_starts_total", [("policy", policy.rawValue), ("outcome", outcome)])
    }

    private var lastLogDrops = 0

    /// Log lines the log writer dropped because its queue was full (at scrape time).
    func refresh(logLinesDropped dropped: Int) {
        count("meridian_log_lines_dropped_total", by: dropped - lastLogDrops)
        lastLogDrops = max(lastLogDrops, dropped)
    }

    /// A cluster node's figures (at scrape time): leases held, the link to the other nodes,
    /// messages relayed each way, sessions taken over from a node that was gone.
    func refresh(_ cluster: ClusterFigures) {
        shared.gauge("meridian_cluster_leases").set(Int64(cluster.leases))
        shared.gauge("meridian_cluster_linked").set(Int64(cluster.linked ? 1 : 0))
        count("meridian_cluster_messages_total", [("direction", "sent")], by: cluster.sent - lastCluster.sent)
        count("meridian_cluster_messages_total", [("direction", "received")], by: cluster.received - lastCluster.received)
        count("meridian_cluster_failovers_total", by: cluster.failovers - lastCluster.failovers)
        lastCluster = cluster
    }

    /// Brings the transport's counters and the gauges up to date (at scrape time).
    func refresh(_ stats: TransportStats, sessions: Int) {
        connections.set(Int64(stats.openConnections))
        sessionsLoaded.set(Int64(sessions))
        queuedBytes.set(Int64(stats.queuedBytes))
        count("meridian_deliveries_total", by: stats.deliveries - lastStats.deliveries)
        for (type, name) in ServerMessage.types.enumerated() where stats.messagesOut[type] != lastStats.messagesOut[type] {
            count("meridian_messages_out_total", [("type", name)], by: stats.messagesOut[type] - lastStats.messagesOut[type])
        }
        count("meridian_bytes_out_total", by: stats.bytesQueued - lastStats.bytesQueued)
        count("meridian_bytes_in_total", by: stats.bytesReceived - lastStats.bytesReceived)
        count("meridian_conflated_frames_total", by: stats.conflatedFrames - lastStats.conflatedFrames)
        count("meridian_slow_consumer_closes_total", by: stats.slowConsumerCloses - lastStats.slowConsumerCloses)
        count("meridian_handshakes_refused_total", by: stats.refusedHandshakes - lastStats.refusedHandshakes)
        messagesWaiting.set(Int64(stats.messagesWaiting))
        count("meridian_input_waited_messages_total", by: stats.messagesWaited - lastStats.messagesWaited)
        count("meridian_input_throttles_total", by: stats.inputThrottles - lastStats.inputThrottles)
        count("meridian_deferred_writes_total", by: stats.deferredWrites - lastStats.deferredWrites)
        count("meridian_direct_writes_total", by: stats.directWrites - lastStats.directWrites)
        count("meridian_batched_writes_total", by: stats.batchedWrites - lastStats.batchedWrites)
        count("meridian_batched_writes_handed_on_total", by: stats.batchedWritesHandedOn - lastStats.batchedWritesHandedOn)
        count("meridian_write_slices_spent_total", by: stats.writeSlicesSpent - lastStats.writeSlicesSpent)
        count("meridian_accepts_paused_total", by: stats.pausedAccepts - lastStats.pausedAccepts)
        count("meridian_handshakes_held_total", by: stats.heldHandshakes - lastStats.heldHandshakes)
        count("meridian_keepalive_pings_total", by: stats.keepalivePings - lastStats.keepalivePings)
        count("meridian_idle_closes_total", by: stats.idleCloses - lastStats.idleCloses)
        lastStats = stats
    }
}
