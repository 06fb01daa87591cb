import MeridianCore
import MeridianTransport

/// Everything a Meridian server runs with. Reading files, environment and
/// flags into it is the executable's job.
public struct ServerConfiguration: Sendable {
    /// The WebSocket/HTTP listener: host, port, TLS, connection limits, frame and queue sizes.
    public var transport: TransportConfiguration
    /// Settings a new session starts with.
    public var sessionDefaults: SessionSettings
    /// Per-session caps: participants, annotations, coordinates per shape, metadata and text sizes.
    public var limits: SessionLimits
    /// Discrete events kept per session for resume.
    public var historySize: Int
    /// Protocol errors (unparseable or invalid requests) tolerated per
    /// connection within `abuseWindow` before it is closed with 4009.
    public var maxProtocolErrors: Int
    /// The sliding window over which `maxProtocolErrors` is counted.
    public var abuseWindow: Duration
    /// Answers plain HTTP requests other than /healthz and /readyz (e.g. the
    /// dashboard's files); nil, or a nil answer, gives a JSON 404. Called on
    /// the service thread: it must not block.
    public var http: (@Sendable (HTTPRequest) -> HTTPResponse?)?
    /// Where sessions are kept, when idle ones are unloaded, how many are loaded.
    public var storage = StorageConfiguration()
    /// Each session's persisted event log: retention and checkpoints.
    public var eventLog = EventLogConfiguration()
    /// Requests each connection may send; see ``RateLimit``.
    public var rateLimit = RateLimit()
    /// Who may join what. `.none` is for development on loopback only.
    public var authentication: Authentication = .none
    /// Service threads, each with its own transport on the shared port and its own hub; a
    /// session lives on one of them (see ``MeridianServer``).
    public var threads = 1
    /// Run as a node of a cluster (Redis for session ownership and the relay between nodes);
    /// nil: a single node. With a cluster, the store must be shared by the nodes (PostgreSQL).
    public var cluster: ClusterConfiguration?
    /// The process's log writer, if it logs through one: /metrics reports the lines it dropped.
    public var logWriter: LogWriter?

    /// A configuration with the defaults: 127.0.0.1:8080, a history of 4,096 events, 100 protocol errors per 10 s; sessions in memory, no authentication, one thread, no cluster.
    public init(
        transport: TransportConfiguration = TransportConfiguration(),
        sessionDefaults: SessionSettings = SessionSettings(),
        limits: SessionLimits = SessionLimits(),
        historySize: Int = 4_096,
        maxProtocolErrors: Int = 100,
        abuseWindow: Duration = .seconds(10)
    ) {
        self.transport = transport
        self.sessionDefaults = sessionDefaults
        self.limits = limits
        self.historySize = historySize
        self.maxProtocolErrors = maxProtocolErrors
        self.abuseWindow = abuseWindow
    }
}

/// A token bucket per connection: `perSecond` requests on average, up to
/// `burst` at once. Beyond it transient requests (camera.changing, drag
/// moves, location) are conflated, the latest of each kind applied as the
/// bucket refills; other requests are refused with `rate_limited` and a
/// `retryAfterMs` hint.
public struct RateLimit: Sendable, Equatable {
    /// Average requests per second a connection may send (the bucket's refill rate).
    public var perSecond: Double
    /// Most requests a connection may send at once (the bucket's size).
    public var burst: Int
    /// A limit of `perSecond` requests per second with bursts up to `burst`.
    public init(perSecond: Double = 200, burst: Int = 400) {
        self.perSecond = perSecond
        self.burst = burst
    }

    /// No practical limit: for load tests and benchmarks that flood on purpose.
    public static let unlimited = RateLimit(perSecond: 1e12, burst: Int(Int32.max))
}
