import Foundation
import MeridianTransportCore
internal import CLibWebSockets

/// A WebSocket + HTTP server on libwebsockets with one service thread.
///
/// Every lws call happens on the service thread (a ``ServiceThread``). Other threads talk to
/// the server only through ``execute(_:)``, ``start()``, ``stop()``, ``now`` and
/// ``sharedFrames``; the handler is held strongly until the service thread ends.
///
/// Thread confinement: every mutable property below is confined to the service thread. The
/// handler's callbacks run there, so the handler may call the service-thread-only methods
/// (``send(_:to:)``, ``stats``, …), which assert the thread in debug builds. The conformance
/// to `Sendable` is unchecked because of that confinement: it lets other threads hold the
/// server to call the thread-safe methods above, never to touch its state.
public final class WebSocketServer: @unchecked Sendable {
    /// Name of the single vhost, used to read back the bound port.
    static let vhostName = "meridian"
    /// Most bytes of smaller frames copied together into one `lws_write`.
    static let writeChunk = 256 * 1024
    /// A frame this large at the head of a queue is written alone, straight from its own bytes.
    static let directWriteMin = 64 * 1024

    /// The configuration the server was created with.
    public let configuration: TransportConfiguration
    /// Where the frames shared by many connections are accounted (any thread may create them).
    public let sharedFrames: SharedFrameLedger
    let startInstant = ContinuousClock.now
    let headroom = Int(mrd_lws_pre())

    /// The service thread, its work queue and its tick. Thread-safe.
    let serviceThread = ServiceThread<WebSocketServer>(name: "meridian-transport")

    // MARK: Service-thread only.
    var handler: TransportHandler?
    var context: OpaquePointer?
    /// The libev loop of the context (nil with poll): lws does not free a foreign loop.
    var eventLoop: UnsafeMutableRawPointer?
    let allocations = CAllocations()
    var connections = ConnectionSlots()
    var behindConnections: Set<ConnectionID> = []
    /// Connections the server decided to close, to report to the handler at the next tick.
    var closesToReport: [ConnectionID] = []
    var httpExchanges: [UInt64: HTTPExchange] = [:]
    var httpBodies: [UInt64: PendingHTTPBody] = [:]
    /// Ids of HTTP exchanges (WebSocket connections have their slots' ids).
    var nextHTTPID: UInt64 = 1
    /// Connections counted by the limits, by wsi, with the handshake they were accepted with.
    var admitted: [OpaquePointer: AdmittedConnection] = [:]
    lazy var admissions = configuration.connectionLimits ?? ConnectionLimits(
        maxTotal: configuration.maxConnections, maxPerPeer: configuration.maxConnectionsPerIP)
    var counters = TransportStats()
    var draining = false
    /// When idle connections' buffers are next given back.
    var nextIdleSweep = Duration.zero
    /// `now` at the latest tick: a clock precise to a tick, without a clock read per write.
    var tickNow = Duration.zero
    var drainDeadline = Duration.zero

    /// Creates a server; nothing happens until ``start()``.
    public init(configuration: TransportConfiguration, handler: TransportHandler) {
        self.configuration = configuration
        self.handler = handler
        self.sharedFrames = SharedFrameLedger(budget: configuration.sharedFrameBudgetBytes)
        connections.tag = ConnectionID(configuration.connectionTag) << 56
    }

    deinit {
        assert(context == nil, "WebSocketServer released while its service thread runs")
    }

    /// Monotonic time since the server was created.
    public var now: Duration { ContinuousClock.now - startInstant }

    /// Creates the lws context on a new service thread, binds, and returns the bound port once
    /// listening. Throws a ``TransportError`` if binding fails.
    public func start() throws -> Int {
        try configuration.validateTLSFiles()
        return try serviceThread.start { [self] () throws(TransportError) in try startService() }
    }

    /// Thread-safe graceful stop: refuses new connections, makes /readyz answer 503, closes every
    /// WebSocket with 1001 "server shutting down", waits up to `shutdownGrace` for them to go,
    /// destroys the context on the service thread and returns when that thread has ended.
    /// Idempotent. Called on the service thread itself it only begins the drain and returns.
    public func stop() {
        if isOnServiceThread {
            beginDrain()
            return
        }
        serviceThread.stop { server in server.beginDrain() }
    }

    /// Thread-safe: runs `body` on the service thread soon. Dropped once the server has stopped.
    public func execute(_ body: @escaping @Sendable () -> Void) {
        serviceThread.execute { _ in body() }
    }

    /// Thread-safe: serves `descriptor`, an accepted TCP socket, as if this server had accepted
    /// it (TLS, the HTTP request, the upgrade). The server owns the descriptor from here on.
    public func adopt(_ descriptor: Int32) {
        let queued = serviceThread.execute { server in
            guard let context = server.context, let vhost = lws_get_vhost_by_name(context, Self.vhostName),
                  lws_adopt_socket_vhost(vhost, descriptor) != nil else {
                Glibc.close(descriptor)
                return
            }
        }
        if !queued { Glibc.close(descriptor) }
    }

    /// Counters for tests and metrics. Service thread only.
    public var stats: TransportStats {
        assertOnServiceThread()
        var stats = counters
        stats.openConnections = connections.count
        stats.admittedConnections = admissions.total
        stats.queuedBytes = connections.all.reduce(0) { $0 + $1.queue.bytes + $1.queue.exemptBytes }
        stats.sharedFrameBytes = sharedFrames.bytes
        stats.writeBufferBytes = connections.all.reduce(0) { $0 + $1.writeBuffer.capacity }
        return stats
    }

    /// Bytes queued and not yet written for `connection` (0 if unknown). Service thread only.
    public func queuedBytes(of connection: ConnectionID) -> Int {
        assertOnServiceThread()
        return connections[connection]?.queue.bytes ?? 0
    }

    var isOnServiceThread: Bool { serviceThread.isCurrent }

    func assertOnServiceThread(_ function: StaticString = #function) {
        serviceThread.assertCurrent(function)
    }
}
