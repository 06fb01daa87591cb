import MeridianClientTransport
import MeridianTransportCore

/// What `meridian load` simulates. Plain values; the command line fills them in.
public struct LoadConfiguration: Sendable {
    /// Host name or address of the server the clients and the seeder connect to.
    public var host = "127.0.0.1"
    /// The server's port: the seeder's always, and every client's when `ports` is empty.
    public var port = 8080
    /// Ports the clients connect to in turn (client `i` to `ports[i % count]`), e.g. the nodes of a
    /// cluster; empty: `port` for all. The seeder uses `port`.
    public var ports: [Int] = []
    /// Simulated clients in all.
    public var clients = 100
    /// Sessions the clients are spread over (session ids `load-0` …).
    public var sessions = 1
    /// Draggers per session (editors running starting/dragging/ending cycles).
    public var draggers = 2
    /// Sessions that have draggers (the first ones); nil: all. The others only listen, e.g. many idle
    /// connections beside a small steady delivery rate.
    public var dragSessions: Int?
    /// Moves per second per dragger.
    public var dragRate = 60.0
    /// Moves per drag before `ending` (then a new `starting`).
    public var movesPerDrag = 60
    /// Spread the draggers' moves over the move interval (each dragger's first move after its
    /// first grant is put off by its own fraction of the interval), as independent users move.
    /// Without it the draggers, granted together, move in step: every interval starts with a
    /// burst of one move from each.
    public var stagger = false
    /// Fraction of draggers that share an annotation with another dragger (drag conflicts). With
    /// viewport interest none do: each dragger drags its own annotation, in its own city.
    public var contention = 0.2
    /// Camera movers per session (own camera begin/changing/end at `cameraRate`).
    public var cameraMovers = 0
    /// Camera updates per second per camera mover.
    public var cameraRate = 10.0
    /// Clients per session changing their selection every `selectInterval` seconds.
    public var selectors = 0
    /// Seconds between two selection changes of one selector.
    public var selectInterval = 2.0
    /// Clients per second (over the whole run) that leave and join again.
    public var churnRate = 0.0
    /// Annotations a seeding client adds to each session before the others join (with viewport
    /// interest: around the cities, the same number in each).
    public var annotations = 0
    /// What the clients ask to receive: everything, or (a big map) the changes in their own city's
    /// view (``LoadInterest``). Viewport interest allows at most ``MoveCoding/maxCityMoves`` moves per drag.
    public var interest = LoadInterest.everything
    /// Seconds over which clients connect (0: all at once).
    public var rampUp = 1.0
    /// Seconds after the ramp-up before measuring, for the last joins to settle.
    public var settle = 1.0
    /// Seconds of measurement after the ramp-up and settling.
    public var duration = 10.0
    /// Client threads (each one lws context driving its share of connections).
    public var threads = 1
    /// The shortest time between two polls of a client thread's sockets (trades up to this
    /// much latency for far fewer, fuller wake-ups under load).
    public var coalescing: Duration = .milliseconds(2)
    /// TLS (`wss://`) for every connection, the seeder's too; nil: plain ws://.
    public var tls: WebSocketClient.TLS?
    /// Local addresses the connections are bound to, in turn (e.g. 127.0.0.1 … 127.0.0.4 for more than
    /// ~28k connections to one server address); empty: the system's choice.
    public var sourceAddresses: [String] = []
    /// The loop each client thread runs: libev (epoll) or lws's poll loop.
    public var eventLoop: EventLoop = .libev
    /// Print a progress line every second (to stderr).
    public var progress = true
    /// Bearer tokens for a server that checks them: `tokens(i)` is client `i`'s
    /// (`i == clients` for the seeder). Nil for `--auth none` servers.
    public var tokens: (@Sendable (Int) -> String)?

    /// `,"token":"…"` for client `index`, or nothing.
    func tokenField(_ index: Int) -> String {
        tokens.map { #","token":"\#($0(index))""# } ?? ""
    }

    /// A configuration with the defaults: 100 clients in one session on 127.0.0.1:8080, two of them draggers, 10 s of measurement.
    public init() {}
}
