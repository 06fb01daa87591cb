/// Every setting of `meridian serve`, each declared here once: key, type (of the
/// default), default, help and check. From each declaration derive its flag
/// (`maxSessions` → `--max-sessions`), its config-file key (`maxSessions`), its
/// environment variable (`MERIDIAN_MAX_SESSIONS`), its line in `--help` and in
/// `--print-config`, and its resolved value (`EffectiveSettings.maxSessions`).
///
/// A new setting is one more line here; `ResolvedSettings` then hands it to the server.
/// Checks that relate two settings (`queueHardLimit` above `queueHighWater`) are made there.
public struct ServeSettings: Sendable {
    /// Builds the table of every declared setting; ``declared`` is the instance the rest of the server reads.
    public init() {}

    // Listening
    /// Address the server binds (default 127.0.0.1, loopback only).
    public let host = Setting("host", "127.0.0.1", "Address to bind.")
    /// TCP port for WebSocket and HTTP, 0...65535 (default 8080); 0 binds a free port, printed on start.
    public let port = Setting("port", 8080, "Port to bind; 0 picks a free one (printed on start).", .within(0...65_535))
    /// Path of the PEM certificate (chain); set with ``tlsKey``, the port serves only wss:// and https://.
    /// Unset (the default): plain ws:// and http://. Both or neither must be set.
    public let tlsCert = Setting<String?>("tlsCert", nil, "PEM certificate (chain) file; with tlsKey the port serves only wss:// and https://.")
    /// Path of the PEM private key of ``tlsCert``; set together with it or not at all.
    public let tlsKey = Setting<String?>("tlsKey", nil, "PEM private key of tlsCert.")
    /// Path of the PEM certificate authorities for mutual TLS: every connection must present a
    /// client certificate one of them signed. Used with ``tlsCert``; unset: no client certificate asked for.
    public let tlsClientCa = Setting<String?>(
        "tlsClientCa", nil, "PEM certificate authorities whose client certificates every connection must present (mutual TLS); with tlsCert.")
    /// Browser origins allowed to open a WebSocket besides the server's own page (`*`: any); an
    /// upgrade with another `Origin` gets HTTP 403. Clients sending no `Origin` are always allowed. Default: none listed.
    public let allowedOrigins = Setting(
        "allowedOrigins", [String](),
        "Origins a browser may connect from (repeat the flag, or comma-separate; \"*\" allows any). Same-origin and Origin-less clients are always allowed; others get 403.")
    /// Most WebSocket connections open or in their handshake at once (default 100 000, at least 1);
    /// an upgrade over it gets HTTP 503.
    public let maxConnections = Setting(
        "maxConnections", 100_000, "Most WebSocket connections at once, handshakes included (over it: HTTP 503).", .atLeast(1))
    /// Most WebSocket connections at once from one client IP address (default 1 000, at least 1);
    /// an upgrade over it gets HTTP 429.
    public let maxConnectionsPerIp = Setting(
        "maxConnectionsPerIp", 1_000, "Most WebSocket connections at once from one IP address (over it: HTTP 429).", .atLeast(1))
    /// Addresses or CIDR ranges of the reverse proxies in front of the server, whose `X-Forwarded-For`
    /// names the client for ``maxConnectionsPerIp`` and logs; empty (the default): the header is ignored.
    public let trustedProxies = Setting(
        "trustedProxies", [String](),
        "Addresses or CIDR ranges (10.0.0.0/8, fd00::/8) of the reverse proxies or load balancers in front of the server: a connection from one counts, for maxConnectionsPerIp and logs, as the client its X-Forwarded-For names (the rightmost address not itself trusted). Empty: X-Forwarded-For is ignored.")
    /// Seconds a new connection has to complete its TCP/TLS setup and its HTTP request or upgrade
    /// before it is closed (default 10, at least 1).
    public let handshakeTimeout = Setting(
        "handshakeTimeout", 10.0, "Seconds a new connection has to complete its HTTP request or upgrade.", .atLeast(1, " s"))
    /// Number of service threads, each with its own event loop and sessions, 0...64; 0 (the default)
    /// means one per core available to the process.
    public let threads = Setting(
        "threads", 0,
        "Service threads, each with its own event loop; a session lives on one of them and the others relay to it. 0 (the default): one per core available to the process.",
        .within(0...64))
    /// Event loop of the transport: "libev" (epoll, the default) or "poll" (libwebsockets' own poll() loop).
    public let eventLoop = Setting(
        "eventLoop", "libev", "Event loop of the transport: libev (epoll) or poll (libwebsockets' own poll() loop).", .oneOf("libev", "poll"))

    // Storage
    /// Directory of the SQLite session store and event log; unset (the default) and without ``store``,
    /// sessions and the log live in memory only.
    public let dataDir = Setting<String?>(
        "dataDir", nil, "Directory of the session store (SQLite, WAL); without it sessions live in memory only.")
    /// PostgreSQL URL (`postgres://user:password@host:port/database`) of a session store shared by the
    /// nodes of a cluster, used instead of ``dataDir``'s SQLite; required with ``cluster``.
    public let store = Setting<String?>(
        "store", nil,
        "Session store shared by the nodes of a cluster, instead of dataDir's SQLite: postgres://user:password@host:port/database. Unset: SQLite in dataDir, else memory.")
    /// Seconds a session with no members stays loaded before it is unloaded (default 300, not negative).
    public let idleUnload = Setting("idleUnload", 300.0, "Seconds a session with no members stays loaded.", .notNegative())
    /// Most sessions loaded at once (default 10 000, at least 1); a join beyond it gets `capacity_exceeded`.
    public let maxSessions = Setting("maxSessions", 10_000, "Most sessions loaded at once.", .atLeast(1))
    /// Seconds an entry stays in a session's event log (default 604 800, a week; at least 1).
    public let eventLogMaxAge = Setting("eventLogMaxAge", 604_800.0, "Seconds each session's event log keeps an entry (the default is a week).", .atLeast(1, " s"))
    /// Most entries a session's event log keeps, the oldest removed first (default 10 000); 0 turns the log off.
    public let eventLogMaxEntries = Setting(
        "eventLogMaxEntries", 10_000, "Entries each session's event log keeps at most, newest first; 0 turns the log off.",
        .notNegative(note: "0 turns the log off"))

    // Sessions
    /// Drag conflict policy new sessions start with: "exclusive" (the default), "priority" or
    /// "last-writer-wins"; a session's owner may change it.
    public let dragPolicy = Setting(
        "dragPolicy", "exclusive", "Drag conflict policy of new sessions.", .oneOf("exclusive", "priority", "last-writer-wins"))
    /// Seconds without a move before a drag lease expires, in new sessions (default 10, at least 0.1).
    public let leaseTimeout = Setting("leaseTimeout", 10.0, "Seconds without a move before a drag lease expires.", .atLeast(0.1, " s"))
    /// Discrete events each session keeps for resume (default 4 096); a client that missed more
    /// gets a fresh snapshot.
    public let historySize = Setting("historySize", 4_096, "Discrete events kept per session for resume.", .atLeast(1))
    /// Participant count above which a session announces joins and leaves together, in one presence
    /// event per tick, instead of one event each (default 100).
    public let presenceBatchAbove = Setting(
        "presenceBatchAbove", 100,
        "Above this many participants a session announces joins and leaves together, in one presence event per tick.", .atLeast(0))
    /// Most participants per session, hidden ones included (default 5 000); a join beyond it gets `limit_exceeded`.
    public let maxParticipants = Setting("maxParticipants", 5_000, "Most participants per session.", .atLeast(1))
    /// Most annotations per session (default 100 000); beyond it `limit_exceeded`.
    public let maxAnnotations = Setting("maxAnnotations", 100_000, "Most annotations per session.", .atLeast(1))
    /// Most coordinates of a polyline, of a polygon ring, and of a polygon's rings together
    /// (default 10 000, at least 4); beyond it `limit_exceeded`.
    public let maxCoordinates = Setting(
        "maxCoordinates", 10_000, "Most coordinates per polyline, and per polygon with all its rings together.", .atLeast(4, note: "a polygon ring"))
    /// Most bytes of an annotation's metadata as the server encodes it (compact, keys sorted; default 4 096).
    public let maxMetadataBytes = Setting("maxMetadataBytes", 4_096, "Most bytes of an annotation's metadata.", .atLeast(1))
    /// Longest title of an annotation or of the shared callout, in characters (default 256); subtitles
    /// and callout details have a fixed limit of 1 024.
    public let maxTitleLength = Setting("maxTitleLength", 256, "Longest annotation or callout title, in characters (subtitles and details: 1024).", .atLeast(1))

    // Connections
    /// Largest inbound message, in bytes (default 65 536, at least 1 024); a larger one closes
    /// the connection with 1009.
    public let maxMessageBytes = Setting(
        "maxMessageBytes", 65_536, "Largest accepted message, in bytes (larger closes with 1009).", .atLeast(1_024))
    /// Requests per second a connection may make on average: the refill rate of its token bucket
    /// (default 200, positive).
    public let rateLimit = Setting("rateLimit", 200.0, "Requests per second per connection (token bucket).", .positive)
    /// Requests a connection may make at once: the size of its token bucket (default 400, at least 1).
    public let rateBurst = Setting("rateBurst", 400, "Requests a connection may send at once above the rate.", .atLeast(1))
    /// Bytes queued for a client that it may exceed for at most ``slowConsumerGrace`` before it is
    /// closed with 4008 (default 1 MiB, at least 1).
    public let queueHighWater = Setting(
        "queueHighWater", 1 << 20, "Outgoing bytes queued for a client before it counts as behind.", .atLeast(1))
    /// Bytes queued for a client above which it is closed at once with 4008 (default 8 MiB);
    /// must exceed ``queueHighWater``.
    public let queueHardLimit = Setting(
        "queueHardLimit", 8 << 20, "Outgoing bytes queued for a client before it is closed at once (4008); above queueHighWater.")
    /// Bytes queued for a client above which an unsent transient frame is dropped for a newer one
    /// of the same key (default 16 KiB); must be below ``queueHighWater``.
    public let conflateAbove = Setting(
        "conflateAbove", 16 << 10,
        "Outgoing bytes queued for a client above which superseded transient events are dropped (conflated); below queueHighWater.",
        .notNegative())
    /// Bytes of frames shared by many connections (the annotation lists of welcomes) that do not
    /// count against each connection's queue limits (default 256 MiB).
    public let sharedFrameBudget = Setting(
        "sharedFrameBudget", 256 << 20,
        "Bytes of frames shared by many connections (the annotation lists of welcomes into big sessions) exempt from the per-connection queue limits.",
        .atLeast(0))
    /// Seconds a client may stay above ``queueHighWater`` before it is closed with 4008 (default 2).
    public let slowConsumerGrace = Setting("slowConsumerGrace", 2.0, "Seconds a client may stay behind before it is closed (4008).", .notNegative())
    /// Whole seconds a client being closed has to read what is queued ahead of its close frame
    /// before it is dropped (default 30, at least 1).
    public let closeTimeout = Setting(
        "closeTimeout", 30, "Seconds a closing client may take to read what is ahead of its close frame.", .atLeast(1, " s"))
    /// Whole seconds a connection may stay quiet (nothing received from it) before the server pings it
    /// (default 30, at least 1).
    public let pingInterval = Setting("pingInterval", 30, "Seconds a connection may be quiet (nothing received from it) before the server pings it.", .atLeast(1, " s"))
    /// Whole seconds a connection may stay quiet (no message, no pong) before it is dropped (default 75);
    /// must exceed ``pingInterval``.
    public let idleTimeout = Setting("idleTimeout", 75, "Seconds a connection may be quiet (no message, no pong) before it is dropped; above pingInterval.")

    // Authentication
    /// How joins are authenticated: "jwt" (the default: a bearer token is required) or "none"
    /// (any name and role; loopback only, for development).
    public let auth = Setting(
        "auth", "jwt", "jwt: joins need a bearer token; none: anyone joins as any role, loopback only, for development.",
        .oneOf("jwt", "none"))
    /// Path of the file holding the HS256 secret (at least 32 bytes) tokens are verified with.
    public let jwtSecretFile = Setting<String?>("jwtSecretFile", nil, "File holding the HS256 secret (at least 32 bytes) tokens are signed with.")
    /// Path of the PEM file of the ES256 (P-256) or RS256 public keys tokens are verified with;
    /// several keys allow rotation.
    public let jwtPublicKeyFile = Setting<String?>(
        "jwtPublicKeyFile", nil, "PEM file of the ES256 (P-256) or RS256 public keys tokens are signed with; several keys for rotation.")
    /// Audience (`aud`) every token must carry; unset (the default): not checked.
    public let jwtAudience = Setting<String?>("jwtAudience", nil, "When set, tokens must carry this audience (aud).")
    /// Issuer (`iss`) every token must name; unset (the default): not checked.
    public let jwtIssuer = Setting<String?>("jwtIssuer", nil, "When set, tokens must come from this issuer (iss).")

    // Cluster
    /// Redis URL of the cluster this server is a node of (`redis://[USER:PASSWORD@]HOST:PORT[/DB]`,
    /// `rediss://` for TLS); unset (the default): a single server. Requires ``store``.
    public let cluster = Setting<String?>(
        "cluster", nil,
        "Redis of a cluster (redis://[USER:PASSWORD@]HOST:PORT[/DB]; with a password every connection logs in with AUTH; rediss://… for TLS, with ?cacert=PATH and, for a client certificate, &cert=PATH&key=PATH): this server is one of its nodes, and a client may connect to any node. Every node needs the same Redis and a shared store (store postgres://…).")
    /// Seconds a node holds a session's lease without renewing it, 0.5...60 (default 2): how long
    /// a session waits for a new owner after its owner dies.
    public let clusterLeaseTtl = Setting(
        "clusterLeaseTtl", 2.0, "Seconds a session's owner node holds its lease without renewing it: how long a session waits for a new owner after its owner dies.",
        .within(0.5...60))
    /// Address operators know this node by, shown in the overview; unset (the default): `host:port`.
    public let advertise = Setting<String?>(
        "advertise", nil, "The address operators know this node by, shown in the overview (default: host:port).")

    // Operation
    /// Lowest level logged: trace, debug, info (the default), notice, warning, error or critical.
    public let logLevel = Setting(
        "logLevel", "info", "Log level.", .oneOf("trace", "debug", "info", "notice", "warning", "error", "critical"))
    /// Raster tile URL template (`{z}`, `{x}`, `{y}`) of the dashboard's map; unset (the default):
    /// the offline basemap.
    public let dashboardTiles = Setting<String?>(
        "dashboardTiles", nil, "Raster tile URL template ({z}/{x}/{y}) under the dashboard's map, instead of the offline basemap.")
    /// MapLibre style URL (a style JSON, e.g. vector streets) under the session view's map, instead
    /// of the offline basemap or the tiles; unset (the default): neither.
    public let dashboardStyle = Setting<String?>(
        "dashboardStyle", nil, "MapLibre style URL under the session view's map (vector streets, say), instead of the offline basemap.")
    /// Directory the dashboard is served from instead of the built-in files; unset (the default): built in.
    public let dashboardDirectory = Setting<String?>(
        "dashboardDirectory", nil, "Serve the dashboard from this directory instead of the built-in files.")
    /// Directory of Leaflet's files, served at /vendor/leaflet/ (default: Debian libjs-leaflet's).
    public let leafletDirectory = Setting(
        "leafletDirectory", "/usr/share/javascript/leaflet", "Leaflet's files (Debian libjs-leaflet), served at /vendor/leaflet/.")
    /// Directory of MapLibre GL JS' files, served at /vendor/maplibre-gl/ (default: where
    /// `make web-deps` puts its pinned release).
    public let maplibreDirectory = Setting(
        "maplibreDirectory", "/usr/local/share/javascript/maplibre-gl",
        "MapLibre GL JS' files (maplibre-gl.js, .css, LICENSE.txt; `make web-deps`), served at /vendor/maplibre-gl/.")
}

extension ServeSettings {
    /// The one table.
    public static let declared = ServeSettings()

    /// Every declared setting, in the order of its declaration (the order of `--help`).
    public static var all: [any AnySetting] { layered }

    static let layered: [any LayeredSetting] = Mirror(reflecting: declared).children.compactMap { $0.value as? any LayeredSetting }
}
