import MeridianTransportCore

/// Where a ``WebSocketClientGroup`` connects and how its service thread runs. Plain values,
/// given at init and handed to the service thread at ``WebSocketClientGroup/start()``.
public struct ClientGroupConfiguration: Sendable {
    public var host: String
    public var port: Int
    /// Ports connections go to in turn by id (`id % count`), e.g. the nodes of a cluster on one
    /// host; empty: `port` for all.
    public var ports: [Int] = []
    public var path: String
    public var subprotocol: String
    /// How often the handler's ``ClientGroupHandler/groupTick(_:)`` is called (at least 100 µs).
    public var tickInterval: Duration
    /// The shortest time between two polls of the sockets: every poll walks every socket, so
    /// under load fewer, fuller wake-ups cost far less per message. Zero polls at once.
    public var coalescing: Duration
    /// Local addresses connections are bound to, taken in turn by id (`id % count`); empty: the
    /// system's choice. Several loopback sources (127.0.0.2, …) lift the ~28k ephemeral ports that
    /// one source address has towards one server address.
    public var sourceAddresses: [String]
    /// The loop the service thread runs; libev keeps a pass cheap with tens of thousands of
    /// mostly idle connections.
    public var eventLoop: EventLoop
    /// When set, a message that arrives in fragments (a welcome with a large snapshot) is
    /// delivered cut to its first this-many bytes, for a handler that reads only the head of
    /// such messages: a connection then never holds a whole snapshot.
    public var keptMessagePrefix: Int?
    /// TLS (`wss://`) for every connection; nil: plain. libwebsockets 4.1 keeps OpenSSL's
    /// per-connection index in one library-wide variable that each TLS context's creation
    /// replaces: start every TLS group of a process before any of them connects.
    public var tls: WebSocketClient.TLS?

    public init(
        host: String = "127.0.0.1", port: Int, path: String = "/", subprotocol: String = "meridian.v1",
        tickInterval: Duration = .milliseconds(1), coalescing: Duration = .zero, sourceAddresses: [String] = [],
        eventLoop: EventLoop = .poll, keptMessagePrefix: Int? = nil
    ) {
        self.host = host
        self.port = port
        self.path = path
        self.subprotocol = subprotocol
        self.tickInterval = tickInterval
        self.coalescing = coalescing
        self.sourceAddresses = sourceAddresses
        self.eventLoop = eventLoop
        self.keptMessagePrefix = keptMessagePrefix
    }
}
