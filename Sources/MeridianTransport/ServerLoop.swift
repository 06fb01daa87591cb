import Foundation
import MeridianTransportCore
internal import CLibWebSockets

/// What a ``WebSocketServer`` is on its service thread: the lws context, the connections and
/// their queues, the handler. Made on the service thread and confined to it, it is not
/// `Sendable`: the handler's callbacks get it (as a channel handler gets its context), and
/// other threads reach it only through ``WebSocketServer/execute(_:)``. The service thread
/// holds it from the context's creation until after `lws_context_destroy`.
public final class ServerLoop {
    /// Name of the single vhost, used to read back the bound port.
    static let vhostName = "meridian"
    /// Most bytes of smaller frames copied together into one `lws_write`.
    static let writeChunk = 256 * 1024
    /// A frame this large at the head of a queue is written alone, straight from its own bytes.
    static let directWriteMin = 64 * 1024

    /// The server this is the loop of: the handle to give other threads.
    public let server: WebSocketServer
    /// The configuration the server was created with.
    public let configuration: TransportConfiguration
    /// Where the frames shared by many connections are accounted.
    public let sharedFrames: SharedFrameLedger
    let headroom = Int(mrd_lws_pre())

    /// The handler the server was made with (nil once the context is destroyed).
    public internal(set) var handler: TransportHandler?
    var context: OpaquePointer?
    /// The libev loop of the context (nil with poll): lws does not free a foreign loop.
    var eventLoop: UnsafeMutableRawPointer?
    let allocations = CAllocations()
    var connections = ConnectionSlots()
    var behindConnections: Set<ConnectionID> = []
    /// The next slot of the connection table the keepalive sweep visits.
    var keepaliveCursor = 0
    /// Connections the server decided to close, to report to the handler at the next tick.
    var closesToReport: [ConnectionID] = []
    var httpExchanges: [UInt64: HTTPExchange] = [:]
    var httpBodies: [UInt64: PendingHTTPBody] = [:]
    /// Ids of HTTP exchanges (WebSocket connections have their slots' ids).
    var nextHTTPID: UInt64 = 1
    /// `lws_service` passes ended so far (ServerLoop+HTTPBody.swift tells a pass that never ends by it).
    var servicePasses: UInt64 = 0
    /// Connections counted by the limits, by wsi, with the handshake they were accepted with.
    var admitted: [OpaquePointer: AdmittedConnection] = [:]
    let admissions: ConnectionLimits
    var counters = TransportStats()
    var draining = false
    /// When idle connections' buffers are next given back.
    var nextIdleSweep = Duration.zero
    /// `now` at the latest tick: a clock precise to a tick, without a clock read per write.
    var tickNow = Duration.zero
    /// Received messages waiting for their turn (ServerLoop+Input.swift).
    var input: InputState
    /// The message being handed to the handler from an inbox: copied out first, since the
    /// handler may close its connection (which empties the inbox) while it reads it.
    var inputScratch: [UInt8] = []
    /// The spare list of ``flushAtPassEnd()``, kept for its capacity.
    var flushSpare: [ConnectionID] = []
    /// Whether input waits, asked between end-of-pass writes (``flushAtPassEnd()``).
    let readiness = InputReadiness()
    /// The batch of end-of-pass writes (nil: each is made on its own), and its writes.
    var sendRing: SendRing?
    var batchedWrites: [BatchedWrite] = []
    /// New connections held unread until their turn (libev loops; ``HandshakeGate``).
    var handshakeGate: HandshakeGate
    /// True once the loop watches ``handshakeGate``.
    var gatesHandshakes = false
    var drainDeadline = Duration.zero

    init(server: WebSocketServer, handler: TransportHandler?) {
        self.server = server
        self.handler = handler
        self.configuration = server.configuration
        self.sharedFrames = server.sharedFrames
        handshakeGate = HandshakeGate(batch: min(64, max(1, server.configuration.handshakesPerPass)))
        input = InputState(
            scheduler: InputScheduler(quantum: max(1, configuration.inputQuantum)), writeAllowance: WriteAllowance(configuration),
            gauge: LoadGauge(limit: configuration.directWritesBelowRate))
        admissions = configuration.connectionLimits ?? ConnectionLimits(
            maxTotal: configuration.maxConnections, maxPerPeer: configuration.maxConnectionsPerIP)
        connections.tag = configuration.connectionTag
        if configuration.writeBatch > 1, !configuration.usesTLS {
            var failure: Int32 = 0
            sendRing = SendRing(capacity: min(configuration.writeBatch, 256), failure: &failure)
            counters.writeBatchFailure = failure
        }
    }

    deinit {
        assert(context == nil, "ServerLoop released while its context lives")
    }

    /// Monotonic time since the server was created.
    public var now: Duration { server.now }

    /// Counters for tests and metrics.
    public var stats: TransportStats {
        var stats = counters
        stats.openConnections = connections.count
        stats.admittedConnections = admissions.total
        stats.queuedBytes = connections.all.reduce(0) { $0 + $1.queue.bytes + $1.queue.exemptBytes }
        stats.sharedFrameBytes = sharedFrames.bytes
        stats.writeBufferBytes = connections.all.reduce(0) { $0 + $1.writeBuffer.capacity }
        stats.messagesWaiting = connections.all.reduce(0) { $0 + $1.inbox.count }
        return stats
    }

    /// Bytes queued and not yet written for `connection` (0 if unknown).
    public func queuedBytes(of connection: ConnectionID) -> Int {
        connections[connection]?.queue.bytes ?? 0
    }
}
