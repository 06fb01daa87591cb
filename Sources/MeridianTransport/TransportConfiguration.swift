import MeridianTransportCore

/// Settings for a ``WebSocketServer``. Plain values; reading files or the environment is the caller's job.
public struct TransportConfiguration: Sendable {
    /// Bind address. An IPv4 literal binds only that address (IPv6 is disabled for it).
    public var host: String = "127.0.0.1"
    /// Listening port; 0 picks an ephemeral port, which ``WebSocketServer/start()`` returns.
    public var port: Int = 8080
    /// The only WebSocket subprotocol accepted; upgrades without it are refused.
    public var subprotocol: String = "meridian.v1"
    /// An inbound message larger than this closes the connection with 1009.
    public var maxMessageBytes: Int = 65_536
    /// Largest HTTP request body read; larger ones are answered 413.
    public var maxHTTPBodyBytes: Int = 1 << 20
    /// Above this many queued bytes a connection is "behind".
    public var queueHighWaterBytes: Int = 1 << 20
    /// Above this many queued bytes, superseded transient frames are dropped rather than written
    /// (conflation, SPEC §4.3): a receiver that keeps up gets every transient frame, one that
    /// falls behind gets the newest of each kind. 0 conflates whenever a newer frame waits.
    public var conflateAboveBytes: Int = 16 << 10
    /// Above this many queued bytes a connection is closed at once with 4008.
    public var queueHardLimitBytes: Int = 8 << 20
    /// Most bytes of shared frames (the shared parts of welcomes into big sessions, each held
    /// once however many connections queue it) that are exempt from the queue limits above;
    /// past it, a connection is charged for the shared frames it queues.
    public var sharedFrameBudgetBytes: Int = 256 << 20
    /// A connection behind continuously for longer than this is closed with 4008.
    public var slowConsumerGrace: Duration = .seconds(2)
    /// Quiet time (nothing from the peer) before the server sends a PING (ServerLoop+Keepalive.swift).
    public var pingInterval: Duration = .seconds(30)
    /// Quiet time (no message, part of one or PONG) before the connection is dropped; must exceed `pingInterval`.
    public var idleTimeout: Duration = .seconds(75)
    /// How often ``TransportHandler/transportTick(_:)`` is called.
    public var tickInterval: Duration = .milliseconds(50)
    /// The loop the service thread runs (BENCHMARKS.md, "Event loop": libev's cost per pass does
    /// not grow with idle connections).
    public var eventLoop: EventLoop = .libev
    /// Most time a pass of the loop spends handling received messages before the rest wait in
    /// their connection's inbox, served in turns between passes (``inputQuantum`` each, sparse
    /// connections first), a slice at a time (ServerLoop+Input.swift). A connection that floods
    /// gets its share and cannot hold up the others.
    public var inputSlice: Duration = .microseconds(150)
    /// Work a connection with waiting messages is given per turn: about a message each, and
    /// one more per 4 KiB of a large one.
    public var inputQuantum: Int = 8
    /// When a connection's waiting messages reach this many bytes, the server stops reading it
    /// (`lws_rx_flow_control`) until they are handled and its turn to read comes.
    public var inboxHighWaterBytes: Int = 4 << 10
    /// A connection is *sparse* while it sends at most ``sparsePerPass`` messages in a pass of
    /// the loop (a request at a time) and at most ``sparseRate`` a second (``sparseBurst`` at
    /// once): it is read whenever it has something, served ahead of busy connections, and
    /// answered at once. Past either it is *busy*: read in turns, ``busyReadsPerPass`` a pass.
    public var sparsePerPass: Int = 2
    public var sparseRate: Double = 100
    public var sparseBurst: Double = 20
    /// Busy connections let read again per pass of the loop.
    public var busyReadsPerPass: Int = 4
    /// Writes asked of lws per pass of the loop, to connections that are not busy and to busy
    /// ones (answers to sparse requests and close frames not counted); more wait for the next
    /// passes, oldest first. Writes waiting their turn gather what else is queued meanwhile, so
    /// that a loaded server makes fewer and larger writes instead of one per frame.
    public var writesPerPass: Int = 64
    public var busyWritesPerPass: Int = 16
    /// While the loop is light (``directWritesBelowRate``), the members a broadcast finds with
    /// nothing else queued are written at the end of the pass, without asking lws for a
    /// WRITEABLE callback: no round trip through the event loop (with libev, an `epoll_ctl` to
    /// ask for POLLOUT, a wake-up, another `epoll_ctl` to drop it) between a move's arrival and
    /// its delivery. Up to this many such writes per pass; 0 turns them off. Never over TLS.
    public var directWritesPerPass: Int = 256
    /// Deliveries a second below which the loop counts as light for ``directWritesPerPass``.
    /// Above it, writes wait for WRITEABLE and each gathers more frames.
    public var directWritesBelowRate: Int = 200_000
    /// Writes whose turn came (``writesPerPass``) are made at the end of the pass as well,
    /// rather than from a WRITEABLE callback: under load too, no `epoll_ctl` pair and wake-up per
    /// write. A socket lws still holds part of a write for waits for WRITEABLE. Never over TLS.
    public var turnWritesAtPassEnd: Bool = true
    /// While the loop is light (``directWritesBelowRate``), the time a pass writes at its end
    /// (at least eight writes) before it asks whether input waits, and if so stops: the members
    /// not written yet are written first in the next pass, after the loop has read what arrived.
    /// A move that comes in during a long fan-out is then handled at once, and goes out in the
    /// same write as the earlier one to every member still waiting, instead of waiting for the
    /// whole fan-out and making a write of its own to each. A loaded loop's writes are bounded by
    /// ``writesPerPass`` instead.
    public var writeSlice: Duration = .microseconds(100)
    /// End-of-pass writes made together, in one system call (io_uring), at most: a fan-out's
    /// writes cost the kernel less than one `send` each. Where io_uring cannot be used (an old
    /// kernel, a seccomp profile that forbids it) each write is made on its own, as with 0 or 1.
    /// Never over TLS.
    public var writeBatch: Int = 16
    /// Bytes of each accepted socket's send buffer (SO_SNDBUF; the kernel doubles it), which
    /// bounds what the kernel holds for a connection that reads slowly; what it does not take
    /// waits in the connection's queue. nil: the kernel's default, which grows with the connection.
    public var socketSendBuffer: Int?
    /// Connections accepted per pass of the loop; more wait in the kernel's accept queue.
    public var acceptsPerPass: Int = 32
    /// New connections whose first bytes (the HTTP request) are read per pass of the event loop,
    /// at most (``HandshakeGate``; libev loops without TLS, at most 64): the others wait, unread,
    /// for a later pass. 0: no limit.
    public var handshakesPerPass: Int = 16
    /// How long ``WebSocketServer/stop()`` waits for connections to finish closing.
    public var shutdownGrace: Duration = .seconds(2)
    /// How long a connection the server is closing may take to read what is
    /// ahead of the close frame (a slow consumer drains its socket buffers
    /// first) before it is dropped without one.
    public var closeTimeout: Duration = .seconds(30)

    // MARK: Facing the internet

    /// Origins (e.g. "https://maps.example.com") whose browsers may open WebSockets; "*" allows
    /// any. A request without Origin (non-browser clients) and a same-origin request (Origin
    /// equal to this server's scheme://Host) are always allowed. Others are refused with 403.
    public var allowedOrigins: [String] = []
    /// Most WebSocket connections at once, counted from the moment an upgrade is accepted
    /// (handshakes in progress included) until the connection is gone. Over it: 503.
    public var maxConnections: Int = 100_000
    /// Most WebSocket connections at once from one peer IP address. Over it: 429.
    public var maxConnectionsPerIP: Int = 1_000
    /// Reverse proxies and load balancers in front of the server: a connection from one of them
    /// is counted (`maxConnectionsPerIP`, logs) by the client address its `X-Forwarded-For`
    /// names (``ClientAddress/resolve(peer:forwardedFor:trusted:)``). Empty: the header is ignored.
    public var trustedProxies: [AddressRange] = []
    /// Time a new TCP (or TLS) connection has to complete its HTTP request; a client that
    /// connects and then sends nothing or only part of a request is dropped after it.
    public var handshakeTimeout: Duration = .seconds(10)
    /// The high byte of every ``ConnectionID`` this server gives out, so that the ids of the
    /// servers of one process (one per service thread) never meet.
    public var connectionTag: UInt8 = 0
    /// Limits shared with the other transports of the same server (one per service thread);
    /// nil: this transport counts its own, from `maxConnections` and `maxConnectionsPerIP`.
    public var connectionLimits: ConnectionLimits?
    /// False for a server that does not listen: it serves only the sockets handed to it with
    /// ``WebSocketServer/adopt(_:)`` (by a listening server's ``handOff``).
    public var listens = true
    /// Called on the listening server's thread with each newly accepted socket, before anything
    /// is read from it: true when the closure took a duplicate of the descriptor for another
    /// server, and this one lets the socket go.
    public var handOff: (@Sendable (Int32) -> Bool)?
    /// PEM certificate (chain) file. With ``tlsPrivateKeyPath`` the port serves only TLS:
    /// wss:// and https://. Both nil: plain ws:// and http://.
    public var tlsCertificatePath: String?
    /// Why the server cannot serve now (nil: it can), asked at each `/readyz`: 503 with the
    /// reason, e.g. while a cluster node is cut off from the other nodes.
    public var unreadiness: (@Sendable () -> String?)?
    /// PEM private key of ``tlsCertificatePath``.
    public var tlsPrivateKeyPath: String?
    /// PEM file of the certificate authorities whose client certificates the server requires
    /// (mutual TLS); nil asks for none. Only with TLS.
    public var tlsClientCAPath: String?

    /// True when TLS is configured.
    public var usesTLS: Bool { tlsCertificatePath != nil || tlsPrivateKeyPath != nil }

    /// Creates a configuration with the defaults above.
    public init() {}

    /// Creates a configuration, overriding any of the defaults.
    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        subprotocol: String = "meridian.v1",
        maxMessageBytes: Int = 65_536,
        queueHighWaterBytes: Int = 1 << 20,
        queueHardLimitBytes: Int = 8 << 20,
        slowConsumerGrace: Duration = .seconds(2),
        pingInterval: Duration = .seconds(30),
        idleTimeout: Duration = .seconds(75),
        tickInterval: Duration = .milliseconds(50),
        shutdownGrace: Duration = .seconds(2),
        closeTimeout: Duration = .seconds(30)
    ) {
        self.host = host
        self.port = port
        self.subprotocol = subprotocol
        self.maxMessageBytes = maxMessageBytes
        self.queueHighWaterBytes = queueHighWaterBytes
        self.queueHardLimitBytes = queueHardLimitBytes
        self.slowConsumerGrace = slowConsumerGrace
        self.pingInterval = pingInterval
        self.idleTimeout = idleTimeout
        self.tickInterval = tickInterval
        self.shutdownGrace = shutdownGrace
        self.closeTimeout = closeTimeout
    }
}
