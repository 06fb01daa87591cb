/// Every setting of `meridian serve`, each declared here once: key, type (of the
/// default), default, help and check. From each declaration derive its flag
/// (`maxSessions` → `--max-sessions`), its config-file key (`maxSessions`), its
/// environment variable (`MERIDIAN_MAX_SESSIONS`), its line in `--help` and in
/// `--print-config`, and its resolved value (`EffectiveSettings.maxSessions`).
///
/// A new setting is one more line here; `ResolvedSettings` then hands it to the server.
/// Checks that relate two settings (`queueHardLimit` above `queueHighWater`) are made there.
public struct ServeSettings: Sendable {
    public init() {}

    // Listening
    public let host = Setting("host", "127.0.0.1", "Address to bind.")
    public let port = Setting("port", 8080, "Port to bind; 0 picks a free one (printed on start).", .within(0...65_535))
    public let tlsCert = Setting<String?>("tlsCert", nil, "PEM certificate (chain) file; with tlsKey the port serves only wss:// and https://.")
    public let tlsKey = Setting<String?>("tlsKey", nil, "PEM private key of tlsCert.")
    public let tlsClientCa = Setting<String?>(
        "tlsClientCa", nil, "PEM certificate authorities whose client certificates every connection must present (mutual TLS); with tlsCert.")
    public let allowedOrigins = Setting(
        "allowedOrigins", [String](),
        "Origins a browser may connect from (repeat the flag, or comma-separate; \"*\" allows any). Same-origin and Origin-less clients are always allowed; others get 403.")
    public let maxConnections = Setting(
        "maxConnections", 100_000, "Most WebSocket connections at once, handshakes included (over it: HTTP 503).", .atLeast(1))
    public let maxConnectionsPerIp = Setting(
        "maxConnectionsPerIp", 1_000, "Most WebSocket connections at once from one IP address (over it: HTTP 429).", .atLeast(1))
    public let trustedProxies = Setting(
        "trustedProxies", [String](),
        "Addresses or CIDR ranges (10.0.0.0/8, fd00::/8) of the reverse proxies or load balancers in front of the server: a connection from one counts, for maxConnectionsPerIp and logs, as the client its X-Forwarded-For names (the rightmost address not itself trusted). Empty: X-Forwarded-For is ignored.")
    public let handshakeTimeout = Setting(
        "handshakeTimeout", 10.0, "Seconds a new connection has to complete its HTTP request or upgrade.", .atLeast(1, " s"))
    public let threads = Setting(
        "threads", 0,
        "Service threads, each with its own event loop; a session lives on one of them and the others relay to it. 0 (the default): one per core available to the process.",
        .within(0...64))
    public let eventLoop = Setting(
        "eventLoop", "libev", "Event loop of the transport: libev (epoll) or poll (libwebsockets' own poll() loop).", .oneOf("libev", "poll"))

    // Storage
    public let dataDir = Setting<String?>(
        "dataDir", nil, "Directory of the session store (SQLite, WAL); without it sessions live in memory only.")
    public let store = Setting<String?>(
        "store", nil,
        "Session store shared by the nodes of a cluster, instead of dataDir's SQLite: postgres://user:password@host:port/database. Unset: SQLite in dataDir, else memory.")
    public let idleUnload = Setting("idleUnload", 300.0, "Seconds a session with no members stays loaded.", .notNegative())
    public let maxSessions = Setting("maxSessions", 10_000, "Most sessions loaded at once.", .atLeast(1))
    public let eventLogMaxAge = Setting("eventLogMaxAge", 604_800.0, "Seconds each session's event log keeps an entry (the default is a week).", .atLeast(1, " s"))
    public let eventLogMaxEntries = Setting(
        "eventLogMaxEntries", 10_000, "Entries each session's event log keeps at most, newest first; 0 turns the log off.",
        .notNegative(note: "0 turns the log off"))

    // Sessions
    public let dragPolicy = Setting(
        "dragPolicy", "exclusive", "Drag conflict policy of new sessions.", .oneOf("exclusive", "priority", "last-writer-wins"))
    public let leaseTimeout = Setting("leaseTimeout", 10.0, "Seconds without a move before a drag lease expires.", .atLeast(0.1, " s"))
    public let historySize = Setting("historySize", 4_096, "Discrete events kept per session for resume.", .atLeast(1))
    public let presenceBatchAbove = Setting(
        "presenceBatchAbove", 100,
        "Above this many participants a session announces joins and leaves together, in one presence event per tick.", .atLeast(0))
    public let maxParticipants = Setting("maxParticipants", 5_000, "Most participants per session.", .atLeast(1))
    public let maxAnnotations = Setting("maxAnnotations", 100_000, "Most annotations per session.", .atLeast(1))
    public let maxCoordinates = Setting(
        "maxCoordinates", 10_000, "Most coordinates per polyline or polygon ring.", .atLeast(4, note: "a polygon ring"))
    public let maxMetadataBytes = Setting("maxMetadataBytes", 4_096, "Most bytes of an annotation's metadata.", .atLeast(1))
    public let maxTitleLength = Setting("maxTitleLength", 256, "Longest annotation title or subtitle, in characters.", .atLeast(1))

    // Connections
    public let maxMessageBytes = Setting(
        "maxMessageBytes", 65_536, "Largest accepted message, in bytes (larger closes with 1009).", .atLeast(1_024))
    public let rateLimit = Setting("rateLimit", 200.0, "Requests per second per connection (token bucket).", .positive)
    public let rateBurst = Setting("rateBurst", 400, "Requests a connection may send at once above the rate.", .atLeast(1))
    public let queueHighWater = Setting(
        "queueHighWater", 1 << 20, "Outgoing bytes queued for a client before it counts as behind.", .atLeast(1))
    public let queueHardLimit = Setting(
        "queueHardLimit", 8 << 20, "Outgoing bytes queued for a client before it is closed at once (4008); above queueHighWater.")
    public let conflateAbove = Setting(
        "conflateAbove", 16 << 10,
        "Outgoing bytes queued for a client above which superseded transient events are dropped (conflated); below queueHighWater.",
        .notNegative())
    public let sharedFrameBudget = Setting(
        "sharedFrameBudget", 256 << 20,
        "Bytes of frames shared by many connections (the annotation lists of welcomes into big sessions) exempt from the per-connection queue limits.",
        .atLeast(0))
    public let slowConsumerGrace = Setting("slowConsumerGrace", 2.0, "Seconds a client may stay behind before it is closed (4008).", .notNegative())
    public let closeTimeout = Setting(
        "closeTimeout", 30, "Seconds a closing client may take to read what is ahead of its close frame.", .atLeast(1, " s"))
    public let pingInterval = Setting("pingInterval", 30, "Seconds a connection may be quiet (nothing received from it) before the server pings it.", .atLeast(1, " s"))
    public let idleTimeout = Setting("idleTimeout", 75, "Seconds a connection may be quiet (no message, no pong) before it is dropped; above pingInterval.")

    // Authentication
    public let auth = Setting(
        "auth", "jwt", "jwt: joins need a bearer token; none: anyone joins as any role, loopback only, for development.",
        .oneOf("jwt", "none"))
    public let jwtSecretFile = Setting<String?>("jwtSecretFile", nil, "File holding the HS256 secret (at least 32 bytes) tokens are signed with.")
    public let jwtPublicKeyFile = Setting<String?>(
        "jwtPublicKeyFile", nil, "PEM file of the ES256 (P-256) or RS256 public keys tokens are signed with; several keys for rotation.")
    public let jwtAudience = Setting<String?>("jwtAudience", nil, "When set, tokens must carry this audience (aud).")
    public let jwtIssuer = Setting<String?>("jwtIssuer", nil, "When set, tokens must come from this issuer (iss).")

    // Cluster
    public let cluster = Setting<String?>(
        "cluster", nil,
        "Redis of a cluster (redis://[USER:PASSWORD@]HOST:PORT[/DB]; with a password every connection logs in with AUTH; rediss://… for TLS, with ?cacert=PATH and, for a client certificate, &cert=PATH&key=PATH): this server is one of its nodes, and a client may connect to any node. Every node needs the same Redis and a shared store (store postgres://…).")
    public let clusterLeaseTtl = Setting(
        "clusterLeaseTtl", 2.0, "Seconds a session's owner node holds its lease without renewing it: how long a session waits for a new owner after its owner dies.",
        .within(0.5...60))
    public let advertise = Setting<String?>(
        "advertise", nil, "The address operators know this node by, shown in the overview (default: host:port).")

    // Operation
    public let logLevel = Setting(
        "logLevel", "info", "Log level.", .oneOf("trace", "debug", "info", "notice", "warning", "error", "critical"))
    public let dashboardTiles = Setting<String?>(
        "dashboardTiles", nil, "Raster tile URL template ({z}/{x}/{y}) under the dashboard's map, instead of the offline basemap.")
    public let dashboardDirectory = Setting<String?>(
        "dashboardDirectory", nil, "Serve the dashboard from this directory instead of the built-in files.")
    public let leafletDirectory = Setting(
        "leafletDirectory", "/usr/share/javascript/leaflet", "Leaflet's files (Debian libjs-leaflet), served at /vendor/leaflet/.")
    public let openLayersDirectory = Setting(
        "openLayersDirectory", "/usr/share/javascript/openlayers",
        "OpenLayers' files (Debian libjs-openlayers), served at /vendor/openlayers/.")
}

extension ServeSettings {
    /// The one table.
    public static let declared = ServeSettings()

    /// Every declared setting, in the order of its declaration (the order of `--help`).
    public static var all: [any AnySetting] { layered }

    static let layered: [any LayeredSetting] = Mirror(reflecting: declared).children.compactMap { $0.value as? any LayeredSetting }
}
