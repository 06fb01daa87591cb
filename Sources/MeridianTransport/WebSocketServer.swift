import Foundation
import MeridianTransportCore
internal import CLibWebSockets

/// A WebSocket + HTTP server on libwebsockets with one service thread.
///
/// Every lws call happens on the service thread. Other threads talk to it only through
/// ``execute(_:)`` (a locked queue plus `lws_cancel_service`), ``start()`` and ``stop()``.
/// The handler is held strongly until the service thread ends.
public final class WebSocketServer: @unchecked Sendable {
    enum LifecycleState {
        case idle
        case starting
        case running(port: Int)
        case failed(TransportError)
        case stopping
        case finished
    }

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

    // MARK: Shared between threads, guarded by `lock`.
    let lock = NSCondition()
    var state = LifecycleState.idle
    var pendingWork: [@Sendable () -> Void] = []
    /// Non-nil exactly while other threads may call `lws_cancel_service` on it.
    var wakeableContext: OpaquePointer?

    // MARK: Service-thread only.
    var handler: TransportHandler?
    var context: OpaquePointer?
    var serviceThread: pthread_t?
    var retainedSelf: Unmanaged<WebSocketServer>?
    let allocations = CAllocations()
    var tickTimer: UnsafeMutablePointer<mrd_timer>?
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
    lazy var admissions = Admissions(
        maxTotal: configuration.maxConnections, maxPerPeer: configuration.maxConnectionsPerIP)
    var counters = TransportStats()
    var draining = false
    /// When idle connections' buffers are next given back.
    var nextIdleSweep = Duration.zero
    /// `now` at the latest tick: a clock precise to a tick, without a clock read per write.
    var tickNow = Duration.zero
    var drainDeadline = Duration.zero
    var exitLoop = false

    /// Creates a server; nothing happens until ``start()``.
    public init(configuration: TransportConfiguration, handler: TransportHandler) {
        self.configuration = configuration
        self.handler = handler
        self.sharedFrames = SharedFrameLedger(budget: configuration.sharedFrameBudgetBytes)
    }

    deinit {
        assert(context == nil, "WebSocketServer released while its service thread runs")
    }

    /// Monotonic time since the server was created.
    public var now: Duration { ContinuousClock.now - startInstant }

    /// Creates the lws context on a new service thread, binds, and returns the bound port once
    /// listening. Throws a ``TransportError`` if binding fails.
    public func start() throws -> Int {
        lock.lock()
        defer { lock.unlock() }
        guard case .idle = state else { throw TransportError.alreadyStarted }
        try configuration.validateTLSFiles()
        state = .starting
        // Balanced by the service thread after lws_context_destroy: lws holds this pointer.
        retainedSelf = Unmanaged.passRetained(self)
        let thread = Thread { [self] in runServiceLoop() }
        thread.name = "meridian-transport"
        thread.start()
        while case .starting = state { lock.wait() }
        switch state {
        case .running(let port): return port
        case .failed(let error): throw error
        default: throw TransportError.bindFailed("stopped while starting")
        }
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
        lock.lock()
        defer { lock.unlock() }
        while case .starting = state { lock.wait() }
        switch state {
        case .idle:
            state = .finished
            return
        case .running:
            state = .stopping
            pendingWork.append { [self] in beginDrain() }
            if let wakeableContext { lws_cancel_service(wakeableContext) }
        case .stopping:
            break
        case .starting, .failed, .finished:
            return
        }
        while true {
            if case .finished = state { return }
            lock.wait()
        }
    }

    /// Thread-safe: runs `body` on the service thread soon. Dropped once the server has stopped.
    public func execute(_ body: @escaping @Sendable () -> Void) {
        lock.lock()
        defer { lock.unlock() }
        switch state {
        case .failed, .finished: return
        default: break
        }
        pendingWork.append(body)
        // The only lws call allowed off the service thread; the context is alive while set.
        if let wakeableContext { lws_cancel_service(wakeableContext) }
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

    var isOnServiceThread: Bool {
        guard let serviceThread else { return false }
        return pthread_equal(serviceThread, pthread_self()) != 0
    }

    func assertOnServiceThread(_ function: StaticString = #function) {
        assert(isOnServiceThread, "\(function) must be called on the transport's service thread")
    }
}
