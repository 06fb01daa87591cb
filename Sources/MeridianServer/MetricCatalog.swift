import MeridianCore
import MeridianProtocol

/// Every series `GET /metrics` serves, with its `# HELP` text and, for a labelled one, every
/// value of its label: the server creates them all at zero when it starts, so a dashboard or
/// an alert finds each series before the first time it counts. A label never holds a session id.
enum MetricCatalog {
    /// The help text of each metric, by name.
    static let help: [String: String] = [
        "meridian_connections": "WebSocket connections open now.",
        "meridian_sessions_loaded": "Sessions loaded in memory now.",
        "meridian_queue_bytes": "Bytes waiting in every connection's queue now (a shared frame counted once per queue).",
        "meridian_input_waiting_messages": "Received messages waiting for their connection's turn.",
        "meridian_messages_in_total": "Messages received, by request type (invalid: not a request).",
        "meridian_messages_out_total": "Messages queued for connections, one per recipient, by type (every server message type of the protocol).",
        "meridian_errors_total": "Requests refused, by error code.",
        "meridian_rate_limited_total": "Requests over their connection's rate limit: conflated (a transient superseded) or refused.",
        "meridian_connection_events_total": "Connections opened and closed.",
        "meridian_drag_starts_total": "Drag starts by conflict policy and outcome (granted, preempted, refused).",
        "meridian_deliveries_total": "Frames queued for connections, one per recipient.",
        "meridian_bytes_out_total": "Bytes queued for connections.",
        "meridian_bytes_in_total": "Bytes received from connections.",
        "meridian_conflated_frames_total": "Transient frames dropped unwritten because a newer one superseded them.",
        "meridian_slow_consumer_closes_total": "Connections closed for reading too slowly (close code 4008).",
        "meridian_handshakes_refused_total": "WebSocket upgrades refused (by Origin, limits, authentication, or while draining).",
        "meridian_input_waited_messages_total": "Received messages that waited for their connection's turn (the server was behind).",
        "meridian_input_throttles_total": "Times a connection was not read until its turn (the server busy, or its inbox full).",
        "meridian_deferred_writes_total": "Writes that waited for a later pass of the event loop (past a pass's allowance).",
        "meridian_direct_writes_total": "Writes a broadcast made at once, outside the event loop's writeable callbacks.",
        "meridian_batched_writes_total": "End-of-pass writes made in batches.",
        "meridian_batched_writes_handed_on_total": "Batched writes a socket did not take whole, finished by libwebsockets.",
        "meridian_write_slices_spent_total": "Passes whose end-of-pass writes stopped at the write time slice, the rest left for the next.",
        "meridian_accepts_paused_total": "Passes in which the listener stopped accepting new connections (accepts per pass reached).",
        "meridian_handshakes_held_total": "New connections held unread until their turn (handshakes per pass reached).",
        "meridian_keepalive_pings_total": "Pings sent to quiet connections.",
        "meridian_idle_closes_total": "Connections closed for not answering a ping within the idle timeout.",
        "meridian_log_lines_dropped_total": "Log lines dropped because the log writer's queue was full.",
        "meridian_storage_commit_seconds": "Time the storage writer took to commit a transaction.",
        "meridian_storage_batch_size": "Changes committed in one storage transaction.",
        "meridian_storage_commit_failures_total": "Storage transactions that failed.",
        "meridian_cluster_leases": "Sessions this node owns (cluster).",
        "meridian_cluster_linked": "1 while this node is linked to the other nodes through Redis (cluster).",
        "meridian_cluster_messages_total": "Messages relayed between nodes, sent and received (cluster).",
        "meridian_cluster_failovers_total": "Sessions taken over from a node that was gone (cluster).",
        "meridian_cluster_handovers_total": "Members moved to their session's owner in place (cluster).",
    ]

    /// The request types a client may send (Protocol/schema, `request.*`), and `invalid` for a
    /// message that is not one.
    static let requestTypes = [
        "join", "leave", "ping", "token.refresh", "overview.watch", "interest",
        "camera.begin", "camera.changing", "camera.end", "camera.lease.acquire", "camera.lease.release", "follow",
        "annotation.add", "annotation.update", "annotation.remove", "select", "deselect",
        "callout.show", "callout.hide", "callout.tap", "drag", "map.load", "location", "session.configure",
        "undo", "redo", "invalid",
    ]

    /// The error codes the server sends (Protocol/schema, `errorCode`).
    static let errorCodes = [
        "invalid_message", "unknown_type", "invalid_field", "not_joined", "already_joined", "forbidden",
        "not_found", "already_exists", "limit_exceeded", "illegal_drag_transition", "not_draggable",
        "drag_conflict", "being_dragged", "revision_conflict", "not_selectable", "callout_not_allowed",
        "camera_lease_held", "camera_lease_required", "camera_out_of_bounds", "storage_unavailable",
        "capacity_exceeded", "unauthorized", "token_expired", "rate_limited", "session_not_found",
    ]

    /// Each labelled counter's label sets.
    static let labelled: [(name: String, labels: [[(String, String)]])] = [
        ("meridian_messages_in_total", requestTypes.map { [("type", $0)] }),
        ("meridian_messages_out_total", ServerMessage.types.map { [("type", $0)] }),
        ("meridian_errors_total", errorCodes.map { [("code", $0)] }),
        ("meridian_rate_limited_total", ["conflated", "refused"].map { [("outcome", $0)] }),
        ("meridian_connection_events_total", ["opened", "closed"].map { [("event", $0)] }),
        ("meridian_drag_starts_total", DragPolicy.allCases.flatMap { policy in
            ["granted", "preempted", "refused"].map { [("policy", policy.rawValue), ("outcome", $0)] }
        }),
    ]

    /// The counters without labels a single server has (the cluster's are added with it).
    static let plainCounters = [
        "meridian_deliveries_total", "meridian_bytes_out_total", "meridian_bytes_in_total",
        "meridian_conflated_frames_total", "meridian_slow_consumer_closes_total", "meridian_handshakes_refused_total",
        "meridian_input_waited_messages_total", "meridian_input_throttles_total", "meridian_deferred_writes_total",
        "meridian_direct_writes_total", "meridian_batched_writes_total", "meridian_batched_writes_handed_on_total",
        "meridian_write_slices_spent_total", "meridian_accepts_paused_total", "meridian_handshakes_held_total",
        "meridian_keepalive_pings_total", "meridian_idle_closes_total", "meridian_log_lines_dropped_total",
    ]

    /// The gauges a cluster node adds.
    static let clusterGauges = ["meridian_cluster_leases", "meridian_cluster_linked"]

    /// The counters without labels a cluster node adds.
    static let clusterCounters = ["meridian_cluster_failovers_total", "meridian_cluster_handovers_total"]

    /// The labelled counters a cluster node adds, with their label sets.
    static let clusterLabelled: [(name: String, labels: [[(String, String)]])] = [
        ("meridian_cluster_messages_total", ["sent", "received"].map { [("direction", $0)] }),
    ]
}
