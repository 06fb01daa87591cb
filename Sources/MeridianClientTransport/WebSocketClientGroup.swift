import MeridianSync
import Foundation
import MeridianTransportCore
import Synchronization

/// Receives a ``WebSocketClientGroup``'s events, all on the group's service thread, with the
/// group's ``ClientGroupLoop``: what the handler may connect, send and close there.
///
/// The group hands the handler to its service thread at ``WebSocketClientGroup/start()`` and
/// holds it there until the loop ends: a handler need not be `Sendable`, and its state is
/// confined to that thread. What other threads need of it goes through state it shares
/// explicitly (a `Mutex`, an `Atomic`), e.g. in ``groupWillEnd(_:)``.
public protocol ClientGroupHandler: AnyObject {
    /// The handshake of connection `id` completed.
    func group(_ group: ClientGroupLoop, didOpen id: Int)
    /// Bytes arrived for connection `id`: the messages they complete follow, all read at this
    /// moment (a handler that stamps receipt times takes the clock once per read here).
    func group(_ group: ClientGroupLoop, willRead id: Int)
    /// One whole text message; the bytes are only valid during the call.
    func group(_ group: ClientGroupLoop, didReceive message: UnsafeRawBufferPointer, from id: Int)
    /// Connection `id` ended: the server's close code (nil without one), `failed` if it never opened.
    func group(_ group: ClientGroupLoop, didClose id: Int, code: UInt16?, failed: Bool)
    /// Called every `tickInterval` on the service thread, to drive timed work.
    func groupTick(_ group: ClientGroupLoop)
    /// The loop has ended (the work queued before ``WebSocketClientGroup/stop()`` has run); the
    /// context is about to be destroyed, which closes the connections still open without telling
    /// the handler. Called once, the handler's last call: where it hands its results over.
    func groupWillEnd(_ group: ClientGroupLoop)
}

extension ClientGroupHandler {
    public func group(_ group: ClientGroupLoop, willRead id: Int) {}
    public func groupWillEnd(_ group: ClientGroupLoop) {}
}

/// Many WebSocket client connections driven by one libwebsockets context and one service
/// thread, for load generation: the handle other threads hold. Connections are named by small
/// integer ids chosen by the caller.
///
/// Each connection is a raw lws socket framed by ``FrameReader``/``FrameWriter`` (a whole
/// read is walked frame by frame), and with `coalescing` above zero the thread polls its
/// sockets at most once per `coalescing`: both keep the generator's cost per received
/// message well below a server's cost per delivery.
///
/// Everything the group does happens on its service thread, in a ``ClientGroupLoop`` made
/// there and confined there: the handler's callbacks get the loop, and other threads reach it
/// only through ``execute(_:)``. This handle holds nothing mutable but what it guards itself,
/// so ``start()``, ``stop()`` and ``execute(_:)`` are callable from any thread.
public final class WebSocketClientGroup: Sendable {
    /// The configuration the group was created with.
    public let configuration: ClientGroupConfiguration
    /// The service thread, its work queue and its tick.
    let serviceThread = ServiceThread<ClientGroupLoop>(name: "meridian-client-group", stackSize: 1 << 20)
    /// The handler, until ``start()`` hands it to the loop on the service thread.
    private let handlerToStart: Locked<(any ClientGroupHandler)?>

    /// Creates a group; nothing happens until ``start()``. The handler goes to the service
    /// thread, where alone it is called, and is held there until the loop ends.
    public init(configuration: ClientGroupConfiguration, handler: sending any ClientGroupHandler) {
        self.configuration = configuration
        self.handlerToStart = Locked(handler)
    }

    /// Starts the service thread; returns once its context exists.
    public func start() throws {
        try serviceThread.start { [self] () throws(TransportError) in
            let handler = handlerToStart.withLock { $0.take() }
            return try ClientGroupLoop(group: self, handler: handler).startService()
        }
    }

    /// Runs `body` on the service thread (soon, in order), with the loop. Dropped once the
    /// group has stopped.
    public func execute(_ body: @escaping @Sendable (ClientGroupLoop) -> Void) {
        serviceThread.execute(body)
    }

    /// Drops every connection (no close frames), destroys the context and joins the thread.
    /// Work queued before runs first. Idempotent; on the service thread it only ends the loop.
    public func stop() {
        serviceThread.stop()
    }

    /// True on the group's service thread.
    public var isOnServiceThread: Bool { serviceThread.isCurrent }
}
