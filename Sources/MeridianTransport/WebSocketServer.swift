import MeridianSync
import Foundation
import MeridianTransportCore
internal import CLibWebSockets

/// A WebSocket + HTTP server on libwebsockets with one service thread: the handle other
/// threads hold.
///
/// Everything the server does happens on its service thread (a ``ServiceThread``), in a
/// ``ServerLoop`` made there and confined there: the handler's callbacks get the loop, and the
/// rest of the program reaches it only through ``execute(_:)``. This handle holds nothing
/// mutable but what it guards itself, so it may go anywhere: ``start()``, ``stop()``,
/// ``execute(_:)``, ``adopt(_:)``, ``now`` and ``sharedFrames`` are callable from any thread.
public final class WebSocketServer: Sendable {
    /// The configuration the server was created with.
    public let configuration: TransportConfiguration
    /// Where the frames shared by many connections are accounted (any thread may create them).
    public let sharedFrames: SharedFrameLedger
    let startInstant = ContinuousClock.now
    /// The service thread, its work queue and its tick.
    let serviceThread = ServiceThread<ServerLoop>(name: "meridian-transport")
    /// The handler, until ``start()`` hands it to the loop on the service thread.
    private let handlerToStart: Locked<TransportHandler?>

    /// Creates a server; nothing happens until ``start()``. The handler goes to the service
    /// thread, where alone it is called.
    public init(configuration: TransportConfiguration, handler: sending TransportHandler) {
        self.configuration = configuration
        self.sharedFrames = SharedFrameLedger(budget: configuration.sharedFrameBudgetBytes)
        self.handlerToStart = Locked(handler)
    }

    /// Monotonic time since the server was created.
    public var now: Duration { ContinuousClock.now - startInstant }

    /// Creates the lws context on a new service thread, binds, and returns the bound port once
    /// listening. Throws a ``TransportError`` if binding fails.
    public func start() throws -> Int {
        try configuration.validateTLSFiles()
        return try serviceThread.start { [self] () throws(TransportError) in
            let handler = handlerToStart.withLock { $0.take() }
            return try ServerLoop(server: self, handler: handler).startService()
        }
    }

    /// Thread-safe graceful stop: refuses new connections, makes /readyz answer 503, closes every
    /// WebSocket with 1001 "server shutting down", waits up to `shutdownGrace` for them to go,
    /// destroys the context on the service thread and returns when that thread has ended.
    /// Idempotent. Called on the service thread itself it only begins the drain and returns.
    public func stop() {
        if serviceThread.withLoopIfCurrent({ $0.beginDrain() }) != nil { return }
        serviceThread.stop { loop in loop.beginDrain() }
    }

    /// Thread-safe: runs `body` on the service thread soon, with the loop. Dropped once the
    /// server has stopped.
    public func execute(_ body: @escaping @Sendable (ServerLoop) -> Void) {
        serviceThread.execute(body)
    }

    /// True on the server's service thread.
    public var isOnServiceThread: Bool { serviceThread.isCurrent }

    /// Thread-safe: serves `descriptor`, an accepted TCP socket, as if this server had accepted
    /// it (TLS, the HTTP request, the upgrade). The server owns the descriptor from here on.
    public func adopt(_ descriptor: Int32) {
        let queued = serviceThread.execute { loop in
            guard let context = loop.context, let vhost = lws_get_vhost_by_name(context, ServerLoop.vhostName),
                  lws_adopt_socket_vhost(vhost, descriptor) != nil else {
                Glibc.close(descriptor)
                return
            }
        }
        if !queued { Glibc.close(descriptor) }
    }
}
