import CoreMetrics
import MeridianCore
import MeridianStorage
import MeridianTransport
import Prometheus

/// The server's Prometheus metrics, served at `GET /metrics`. Each server has
/// its own registry (no global bootstrap), and every label has a fixed set of
/// values (request types, error codes, policies): never a session id.
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    let factory: PrometheusMetricsFactory
    let commitLatency: CoreMetrics.Timer
    let batchSize: CoreMetrics.Recorder
    let commitFailures: CoreMetrics.Counter

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.valueHistogramBuckets["meridian_storage_batch_size"] = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000]
        factory.durationHistogramBuckets["meridian_storage_commit_seconds"] = [
            .microseconds(500), .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10),
            .milliseconds(25), .milliseconds(50), .milliseconds(100), .milliseconds(250), .seconds(1),
        ]
        self.factory = factory
        commitLatency = CoreMetrics.Timer(label: "meridian_storage_commit_seconds", factory: factory)
        batchSize = CoreMetrics.Recorder(label: "meridian_storage_batch_size", aggregate: true, factory: factory)
        commitFailures = CoreMetrics.Counter(label: "meridian_storage_commit_failures_total", factory: factory)
    }

    /// Called by the storage writer after each transaction.
    func record(_ batch: StorageWriter.Batch) {
        commitLatency.recordNanoseconds(Int64(batch.duration.components.seconds) * 1_000_000_000 + batch.duration.components.attoseconds / 1_000_000_000)
        batchSize.record(batch.changes)
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
    private var counters: [String: CoreMetrics.Counter] = [:]
    private let connections: CoreMetrics.Gauge
    private let sessionsLoaded: CoreMetrics.Gauge
    private let queuedBytes: CoreMetrics.Gauge
    private let messagesWaiting: CoreMetrics.Gauge
    private var lastStats = TransportStats()
    private var lastCluster = ClusterFigures()

    init(_ shared: ServerMetrics) {
        self.shared = shared
        connections = CoreMetrics.Gauge(label: "meridian_connections", factory: shared.factory)
        sessionsLoaded = CoreMetrics.Gauge(label: "meridian_sessions_loaded", factory: shared.factory)
        queuedBytes = CoreMetrics.Gauge(label: "meridian_queue_bytes", factory: shared.factory)
        messagesWaiting = CoreMetrics.Gauge(label: "meridian_input_waiting_messages", factory: shared.factory)
    }

    func count(_ name: String, _ dimensions: [(String, String)] = [], by amount: Int = 1) {
        guard amount > 0 else { return }
        let key = name + dimensions.map { "|\($0.0)=\($0.1)" }.joined()
        let counter = counters[key] ?? {
            let c = CoreMetrics.Counter(label: name, dimensions: dimensions, factory: shared.factory)
            counters[key] = c
            return c
        }()
        counter.increment(by: Int64(amount))
    }

    /// Counters of one label, by value: a per-message count costs one lookup of a short key
    /// (``count(_:_:by:)`` builds its key from the name and every label first).
    private var messagesIn: [String: CoreMetrics.Counter] = [:]
    private var messagesOut: [String: CoreMetrics.Counter] = [:]
    private var errors: [String: CoreMetrics.Counter] = [:]
    private var rateLimits: [Bool: CoreMetrics.Counter] = [:]

    private func increment<Key: Hashable>(_ cache: inout [Key: CoreMetrics.Counter], _ key: Key, _ make: () -> CoreMetrics.Counter) {
        if let counter = cache[key] { return counter.increment() }
        let counter = make()
        cache[key] = counter
        counter.increment()
    }

    /// The counter of the last type counted in: a client mostly sends one type in a row (drag
    /// moves), and comparing two short strings costs less than hashing one.
    private var lastIn: (type: String, counter: CoreMetrics.Counter)?

    func messageIn(_ type: String) {
        if let lastIn, lastIn.type == type { return lastIn.counter.increment() }
        increment(&messagesIn, type) { CoreMetrics.Counter(label: "meridian_messages_in_total", dimensions: [("type", type)], factory: shared.factory) }
        lastIn = (type, messagesIn[type]!)
    }
    func messageOut(_ type: String) {
        increment(&messagesOut, type) { CoreMetrics.Counter(label: "meridian_messages_out_total", dimensions: [("type", type)], factory: shared.factory) }
    }
    func error(_ code: SessionError.Code) {
        increment(&errors, code.rawValue) { CoreMetrics.Counter(label: "meridian_errors_total", dimensions: [("code", code.rawValue)], factory: shared.factory) }
    }
    /// A request over its connection's rate limit: conflated (transient) or refused.
    func rateLimited(conflated: Bool) {
        increment(&rateLimits, conflated) {
            CoreMetrics.Counter(label: "meridian_rate_limited_total", dimensions: [("outcome", conflated ? "conflated" : "refused")], factory: shared.factory)
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
        CoreMetrics.Gauge(label: "meridian_cluster_leases", factory: shared.factory).record(cluster.leases)
        CoreMetrics.Gauge(label: "meridian_cluster_linked", factory: shared.factory).record(cluster.linked ? 1 : 0)
        count("meridian_cluster_messages_total", [("direction", "sent")], by: cluster.sent - lastCluster.sent)
        count("meridian_cluster_messages_total", [("direction", "received")], by: cluster.received - lastCluster.received)
        count("meridian_cluster_failovers_total", by: cluster.failovers - lastCluster.failovers)
        lastCluster = cluster
    }

    /// Brings the transport's counters and the gauges up to date (at scrape time).
    func refresh(_ stats: TransportStats, sessions: Int) {
        connections.record(stats.openConnections)
        sessionsLoaded.record(sessions)
        queuedBytes.record(stats.queuedBytes)
        count("meridian_deliveries_total", by: stats.deliveries - lastStats.deliveries)
        count("meridian_bytes_out_total", by: stats.bytesQueued - lastStats.bytesQueued)
        count("meridian_bytes_in_total", by: stats.bytesReceived - lastStats.bytesReceived)
        count("meridian_conflated_frames_total", by: stats.conflatedFrames - lastStats.conflatedFrames)
        count("meridian_slow_consumer_closes_total", by: stats.slowConsumerCloses - lastStats.slowConsumerCloses)
        count("meridian_handshakes_refused_total", by: stats.refusedHandshakes - lastStats.refusedHandshakes)
        messagesWaiting.record(stats.messagesWaiting)
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
