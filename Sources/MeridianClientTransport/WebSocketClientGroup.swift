import Foundation
import MeridianTransportCore
internal import CLibWebSockets

/// Receives a ``WebSocketClientGroup``'s events, all on the group's service thread.
public protocol ClientGroupHandler: AnyObject {
    /// The handshake of connection `id` completed.
    func group(_ group: WebSocketClientGroup, didOpen id: Int)
    /// One whole text message; the bytes are only valid during the call.
    func group(_ group: WebSocketClientGroup, didReceive message: UnsafeRawBufferPointer, from id: Int)
    /// Connection `id` ended: the server's close code (nil without one), `failed` if it never opened.
    func group(_ group: WebSocketClientGroup, didClose id: Int, code: UInt16?, failed: Bool)
    /// Called every `tickInterval` on the service thread, to drive timed work.
    func groupTick(_ group: WebSocketClientGroup)
}

/// Many WebSocket client connections driven by one libwebsockets context and one service
/// thread, for load generation. Connections are named by small integer ids chosen by the caller.
///
/// Each connection is a raw lws socket framed by ``FrameReader``/``FrameWriter`` (a whole
/// read is walked frame by frame), and with `coalescing` above zero the thread polls its
/// sockets at most once per `coalescing`: both keep the generator's cost per received
/// message well below a server's cost per delivery.
///
/// The group does not retain its handler: keep the handler alive until ``stop()`` has returned.
///
/// Thread rule (as for the server): ``connect(_:)``, ``send(_:to:)`` and ``close(_:code:)``
/// are called only on the service thread, i.e. from the handler's callbacks;
/// ``execute(_:)``, ``start()`` and ``stop()`` may be called from any thread.
///
/// Thread confinement: the mutable state below is confined to the service thread (a
/// ``ServiceThread``), except the settings documented as "set before ``start()``". The
/// conformance to `Sendable` is unchecked because of that confinement: it lets other threads
/// hold the group to call the thread-safe methods, never to touch its state.
public final class WebSocketClientGroup: @unchecked Sendable {
    struct Link {
        var wsi: OpaquePointer?
        /// Encoded frames (or the upgrade request) not yet written.
        var outgoing: [UInt8] = []
        var buffer = WriteBuffer(headroom: Int(mrd_lws_pre()))
        var reader = FrameReader()
        var peerClose: UInt16?
        /// A close frame is queued: nothing more is sent.
        var closing = false
        /// Hang up once the queue is written (after answering the server's close).
        var closeAfterWrite = false
        var opened = false
    }

    let host: String
    let port: Int
    let path: String
    let subprotocol: String
    let tickInterval: Duration
    /// The shortest time between two polls of the sockets; see ``init(host:port:path:subprotocol:tickInterval:coalescing:handler:)``.
    let coalescing: Duration
    /// Local addresses connections are bound to, taken in turn by id (`id % count`); empty: the
    /// system's choice. Several loopback sources (127.0.0.2, …) lift the ~28k ephemeral ports that
    /// one source address has towards one server address. Set before ``start()``.
    public var sourceAddresses: [String] = []
    /// The loop the service thread runs; libev keeps a pass cheap with tens of thousands of
    /// mostly idle connections. Set before ``start()``.
    public var eventLoop: EventLoop = .poll
    /// When set, a message that arrives in fragments (a welcome with a large snapshot) is
    /// delivered cut to its first this-many bytes, for a handler that reads only the head of
    /// such messages: a connection then never holds a whole snapshot. Set before ``start()``.
    public var keptMessagePrefix: Int?
    /// Not retained (the handler owns the group) and not weak: a weak reference would make every
    /// retain of the handler take the slow path, once per message.
    unowned(unsafe) var handlerStorage: (any ClientGroupHandler)?

    /// The service thread, its work queue and its tick. Thread-safe.
    let serviceThread = ServiceThread<WebSocketClientGroup>(name: "meridian-client-group", stackSize: 1 << 20)

    // MARK: Service thread only.
    var context: OpaquePointer?
    /// The libev loop of the context (nil with poll): lws does not free a foreign loop.
    var libevLoop: UnsafeMutableRawPointer?
    var links: [Int: Link] = [:]
    let allocations = CAllocations()
    /// host, the RAW method and subprotocol as C strings, allocated once for every connect.
    var cStrings: (host: UnsafeMutablePointer<CChar>, raw: UnsafeMutablePointer<CChar>, protocolName: UnsafeMutablePointer<CChar>)?
    /// ``sourceAddresses`` as C strings, allocated with ``cStrings``.
    var sourceCStrings: [UnsafeMutablePointer<CChar>] = []
    /// Bytes lws reads from a socket at once.
    static let readBufferSize = 64 * 1024
    /// Set when a connection is left in the middle of a frame by the current service call.
    var messageInFlight = false
    /// xorshift state for masking keys.
    var maskState = UInt64.random(in: 1...UInt64.max)

    public init(
        host: String = "127.0.0.1", port: Int, path: String = "/", subprotocol: String = "meridian.v1",
        tickInterval: Duration = .milliseconds(1), coalescing: Duration = .zero, handler: any ClientGroupHandler
    ) {
        self.coalescing = coalescing
        self.host = host
        self.port = port
        self.path = path
        self.subprotocol = subprotocol
        self.tickInterval = tickInterval
        self.handlerStorage = handler
    }

    /// Starts the service thread; returns once its context exists.
    public func start() throws {
        try serviceThread.start { [self] () throws(TransportError) in try startService() }
    }

    /// Runs `body` on the service thread (soon, in order). Dropped once the group has stopped.
    public func execute(_ body: @escaping @Sendable () -> Void) {
        serviceThread.execute { _ in body() }
    }

    /// Drops every connection (no close frames), destroys the context and joins the thread.
    /// Work queued before runs first. Idempotent; on the service thread it only ends the loop.
    public func stop() {
        serviceThread.stop()
    }

    /// Open connections (service thread).
    public var connectionCount: Int { links.count }
}
