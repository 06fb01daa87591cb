import Logging
import MeridianRedis
import MeridianTransport
import Glibc
import MeridianSync
import Synchronization

/// A Meridian server: sessions hosted on libwebsockets transports, one per service thread.
///
/// With several threads the first transport listens and hands the connections it accepts to
/// every thread in turn (the descriptor moves before anything is read from it); each thread has
/// its own transport and hub, and a session lives on one of them, its home: members connected
/// to other threads are served through the relay (Relay.swift).
public final class MeridianServer: Sendable {
    /// What the server was made with (the transport's port as configured; ``start()`` returns the bound one).
    public let configuration: ServerConfiguration
    private let first: WebSocketServer
    /// The other threads' transports, made once the first listens.
    private let others = OtherThreads()
    /// The hubs' relay: in-process (``local``), or a cluster node's (``cluster``).
    private let relay: (any Relay)?
    private let local: LocalRelay?
    private let cluster: ClusterNode?
    private let board = OverviewBoard()
    private let loads = LoadCounts()
    private let storage = StorageSlot()
    private let eventLog = EventLog()
    private let logger: Logger
    private let metrics = ServerMetrics()

    /// A server for `configuration`, logging through `logger`; nothing is opened or listens until ``start()``.
    public init(configuration: ServerConfiguration, logger: Logger = Logger(label: "meridian")) {
        self.configuration = configuration
        self.logger = logger
        // In a cluster the gateway to the other nodes takes the relay index after the hubs, and
        // a connection's relay indexes fit a 64-bit mask.
        let threads = configuration.cluster == nil ? max(1, configuration.threads) : min(max(1, configuration.threads), 63)
        if let settings = configuration.cluster {
            // The cluster's broker is its Redis: the one place the server names it.
            let broker = RedisBroker(address: settings.redis, leaseTTL: settings.leaseTTL)
            let node = ClusterNode(configuration: settings, broker: broker, hubs: threads, board: board, logger: logger)
            (cluster, local, relay) = (node, node.gateway.local, node.relay)
        } else {
            cluster = nil
            local = threads > 1 ? LocalRelay(hubs: threads) : nil
            relay = local
        }
        let hub = Hub(configuration: configuration, logger: logger, storage: storage, eventLog: eventLog, metrics: metrics,
                      place: relay.map { [board, loads, cluster] in HubPlace(hub: 0, relay: $0, board: board, loads: loads, cluster: cluster) })
        var transport = configuration.transport
        transport.unreadiness = { [storage, cluster] in storage.unreadiness ?? cluster?.unreadiness }
        if threads > 1 {
            transport.connectionLimits = ConnectionLimits(
                maxTotal: transport.maxConnections, maxPerPeer: transport.maxConnectionsPerIP)
            let others = self.others
            transport.handOff = { descriptor in others.take(descriptor, threads: threads) }
        }
        first = WebSocketServer(configuration: transport, handler: hub)
        if cluster != nil { metrics.addClusterSeries() }
    }

    /// Opens the session store, then starts serving; returns the bound port.
    /// Throws a ``StorageError`` naming the path and cause when the store
    /// cannot be opened (unwritable directory, a file that is not a database).
    public func start() throws -> Int {
        if case .none = configuration.authentication, !Authentication.isLoopback(configuration.transport.host) {
            throw ConfigurationError(
                "authentication none accepts anyone as any role: it binds only to loopback (127.0.0.1, ::1), not \(configuration.transport.host)")
        }
        let metrics = self.metrics
        try storage.open(configuration.storage, onBatch: { metrics.record($0) })
        do {
            try eventLog.open(configuration.eventLog, storage: configuration.storage, logger: logger)
            // The node joins its cluster in the background; until then /readyz says why not.
            cluster?.start()
            wake(0, first)
            // The threads that do not listen first: with TLS each makes a context, and
            // libwebsockets 4.1 replaces a library-wide OpenSSL index with every context it
            // makes, which a handshake already in flight on the listening thread would miss.
            try startOtherThreads(on: configuration.transport.port)
            return try first.start()
        } catch {
            stopTransports()
            cluster?.stop()
            eventLog.close()
            storage.close()
            throw error
        }
    }

    /// Graceful stop: refuse new connections, close every connection with
    /// 1001, and return when the service threads have ended.
    public func stop() {
        stopTransports()
        cluster?.stop()
        eventLog.close()
        storage.close()
    }

    private func stopTransports() {
        first.stop()
        for server in others.servers.withLock({ $0 }) { server.stop() }
    }

    /// The transports of threads 1…, serving the connections the first one hands them (with
    /// its limits, shared). They do not listen: `port` is the configured one, 0 included.
    private func startOtherThreads(on port: Int) throws {
        guard let relay, relay.hubs > 1 else { return }
        for thread in 1..<relay.hubs {
            var configuration = self.configuration
            configuration.transport.port = port
            let hub = Hub(configuration: configuration, logger: logger, storage: storage, eventLog: eventLog, metrics: metrics,
                          place: HubPlace(hub: thread, relay: relay, board: board, loads: loads, cluster: cluster))
            var transport = first.configuration
            transport.port = port
            transport.handOff = nil
            transport.connectionTag = UInt8(thread)
            transport.listens = false
            let server = WebSocketServer(configuration: transport, handler: hub)
            // Woken for relayed messages before it can be handed a connection.
            wake(thread, server)
            others.servers.withLock { $0.append(server) }
            _ = try server.start()
        }
    }

    /// Relayed messages for thread `thread` are taken on that thread, when its inbox fills.
    private func wake(_ thread: Int, _ server: WebSocketServer) {
        guard let local else { return }
        local.onPost(to: thread) { server.execute { loop in (loop.handler as? Hub)?.takeRelayed(on: loop) } }
    }
}

/// A configuration the server refuses to run with.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    /// Why the configuration was refused.
    public var description: String
    /// An error that says `description`.
    public init(_ description: String) { self.description = description }
}

/// The transports of threads 1…, and the turn of the next accepted connection.
private final class OtherThreads: Sendable {
    let servers = Locked<[WebSocketServer]>([])
    private let accepted = Atomic<Int>(0)

    /// Hands every `threads`-th accepted socket to each thread in turn (the first keeps its
    /// turns): true when another thread adopts a duplicate of `descriptor`.
    func take(_ descriptor: Int32, threads: Int) -> Bool {
        let turn = accepted.wrappingAdd(1, ordering: .relaxed).oldValue % threads
        guard turn > 0, let server = servers.withLock({ turn <= $0.count ? $0[turn - 1] : nil }) else { return false }
        let copy = dup(descriptor)
        guard copy >= 0 else { return false }
        server.adopt(copy)
        return true
    }
}
