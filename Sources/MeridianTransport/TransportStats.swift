internal import MeridianProtocol

/// Counters for tests and metrics.
public struct TransportStats: Sendable, Equatable {
    /// Transient frames dropped because a newer frame with the same key superseded them.
    public var conflatedFrames: Int = 0
    /// Connections closed with 4008 for falling behind.
    public var slowConsumerCloses: Int = 0
    /// WebSocket connections currently open.
    public var openConnections: Int = 0
    /// Frames queued for a connection (one per recipient) and their bytes.
    public var deliveries: Int = 0
    /// Messages queued for a connection (one per recipient), by type: indexed as the protocol's
    /// `ServerMessage.types` (``FrameBytes/messageType``). A message in fragments counts once.
    public var messagesOut = [Int](repeating: 0, count: TransportStats.messageTypes)
    public var bytesQueued: Int = 0
    /// Complete messages received and their bytes.
    public var messagesReceived: Int = 0
    public var bytesReceived: Int = 0
    /// Bytes waiting in every connection's queue now (a shared frame counted once per queue).
    public var queuedBytes: Int = 0
    /// Bytes of the shared frames alive now (each counted once).
    public var sharedFrameBytes: Int = 0
    /// Bytes of write buffers held by connections now (idle ones give theirs back).
    public var writeBufferBytes: Int = 0
    /// WebSocket connections counted by the connection limits: open or completing the handshake.
    public var admittedConnections: Int = 0
    /// Upgrade requests refused (by Origin, limits, the handler, or because the server drains).
    public var refusedHandshakes: Int = 0
    /// Received messages that waited for their connection's turn (the server was behind).
    public var messagesWaited: Int = 0
    /// Times the server stopped reading a connection until its turn (busy, or its inbox full).
    public var inputThrottles: Int = 0
    /// Writes that waited for a later pass (past a pass's allowance of writes).
    public var deferredWrites: Int = 0
    /// Writes a broadcast made at once, outside WRITEABLE (``TransportConfiguration/directWritesPerPass``).
    public var directWrites: Int = 0
    /// End-of-pass writes made in batches (``TransportConfiguration/writeBatch``), and those of
    /// them a socket did not take whole, handed to lws to finish.
    public var batchedWrites: Int = 0
    public var batchedWritesHandedOn: Int = 0
    /// Why end-of-pass writes are not batched (an errno: io_uring unavailable, or it failed);
    /// 0 when they are, or batching is off.
    public var writeBatchFailure: Int32 = 0
    /// Passes whose end-of-pass writes stopped at ``TransportConfiguration/writeSlice``, the rest
    /// left for the next pass.
    public var writeSlicesSpent: Int = 0
    /// Passes in which the listener stopped accepting (``TransportConfiguration/acceptsPerPass``).
    public var pausedAccepts: Int = 0
    /// New connections held unread until their turn (``TransportConfiguration/handshakesPerPass``),
    /// and the most WebSocket upgrades served in one pass.
    public var heldHandshakes: Int = 0
    public var mostUpgradesInAPass: Int = 0
    /// Requests answered before libwebsockets read them (a `%00` in the target: ServerLoop+EarlyAnswer.swift).
    public var earlyAnswers: Int = 0
    /// Keepalive PINGs sent, and connections dropped for being quiet past the idle timeout.
    public var keepalivePings: Int = 0
    public var idleCloses: Int = 0
    /// Messages waiting for their turn now.
    public var messagesWaiting: Int = 0

    public init() {}

    /// How many message types ``messagesOut`` counts.
    public static let messageTypes = ServerMessage.types.count
}
