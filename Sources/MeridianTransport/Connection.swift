import MeridianTransportCore

/// What every delivery to a connection touches, kept apart from the rest of its state and
/// reached through a pointer: queueing a frame costs no reference counting and no dynamic
/// exclusivity check, and touches this and one slot of the queue's ring.
struct ConnectionHot {
    let id: ConnectionID
    /// The `struct lws *`; valid until LWS_CALLBACK_CLOSED.
    let wsi: OpaquePointer
    var queue = ConnectionQueue()
    var writableRequested = false
    /// Set with ``Connection/closing``: nothing more is queued.
    var isClosing = false
    /// See ``Connection/throttled``; here for broadcasts, whose writes to such a connection
    /// wait their turn.
    var throttled = false
}

/// Per-connection state, confined to the service thread. lws's per-session memory holds only
/// the `id`, whose low half is this object's slot in the server's table (``ConnectionSlots``).
final class Connection {
    let hot: UnsafeMutablePointer<ConnectionHot>
    var id: ConnectionID { hot.pointee.id }
    var wsi: OpaquePointer { hot.pointee.wsi }
    var queue: ConnectionQueue {
        get { hot.pointee.queue }
        _modify { yield &hot.pointee.queue }
    }
    var writableRequested: Bool {
        get { hot.pointee.writableRequested }
        set { hot.pointee.writableRequested = newValue }
    }
    var writeBuffer: WriteBuffer
    /// When the connection last wrote (server `now`), for releasing idle buffers.
    var lastWrite = Duration.zero
    /// When the queue went above the high-water mark (server `now`), nil when not behind.
    var behindSince: Duration?
    /// Above this many queued bytes the queue is compacted before it counts as behind: twice
    /// what it held after the last compaction, so compacting stays linear overall.
    var compactAbove = 0
    /// Set once the server decided to close; the close frame goes out from WRITEABLE.
    var closing: (code: UInt16, reason: String)? {
        didSet { hot.pointee.isClosing = closing != nil }
    }
    /// True once the close frame was handed to lws (it then awaits the peer's answer).
    var closeFrameSent = false
    /// True once the handler was told the connection closed (for a close the
    /// server decided, at the next tick, before lws has finished closing it).
    var reported = false
    /// The peer's close frame, if it sent one.
    var peerClose: (code: UInt16?, reason: String)?

    /// Reassembly of a message that arrived in several parts; reused from message to message.
    var inbound: [UInt8] = []
    /// True while `inbound` holds the start of a message.
    var assembling = false
    /// RFC 6455 checks of the inbound messages (UTF-8 across pieces and fragments).
    var inboundCheck = InboundCheck()
    /// True once the connection is being closed: its input is ignored from then on.
    var refusingInput = false
    /// Whole messages received that wait for their turn (ServerLoop+Input.swift).
    var inbox = Inbox()
    /// True while lws is told not to read the connection (`lws_rx_flow_control`): it is busy or
    /// its inbox is full, so what it sends waits in lws's buffer and the kernel's, then in the
    /// client, until its turn to read comes. Its writes wait their turn too.
    var throttled: Bool {
        get { hot.pointee.throttled }
        set { hot.pointee.throttled = newValue }
    }
    /// True while it waits for that turn (in the loop's `readWaiters`).
    var waitingToRead = false
    /// True once it sent, in the current pass, a message that was not sparse.
    var busy = false
    /// The pass of the event loop it was last read in, and how many messages it sent in it.
    var readPass: UInt64 = .max
    var messagesThisPass = 0
    /// Messages the connection may still send as a sparse one (served ahead of busy ones, read
    /// whenever it has something), refilled with time, and when it was last refilled.
    var sparseCredit = Double.infinity
    var sparseCreditAt = Duration.zero
    /// True when its next write answers a sparse request: it is not put off.
    var answerFirst = false
    /// True while its write is put off (in one of the loop's write waiters).
    var writeDeferred = false
    /// When the peer last sent anything (a message, a part of one, a PONG), and when it was
    /// last sent a keepalive PING (ServerLoop+Keepalive.swift); set once it is dropped as idle.
    var lastHeard = Duration.zero
    var lastPinged = Duration.zero
    var idleClosed = false

    init(id: ConnectionID, wsi: OpaquePointer, headroom: Int) {
        hot = .allocate(capacity: 1)
        hot.initialize(to: ConnectionHot(id: id, wsi: wsi))
        self.writeBuffer = WriteBuffer(headroom: headroom)
    }

    deinit {
        // Only dropped after LWS_CALLBACK_CLOSED, when lws no longer reads the buffer.
        writeBuffer.release()
        // Queued frames are not retained one by one (see ConnectionQueue).
        hot.pointee.queue.removeAll()
        hot.deinitialize(count: 1)
        hot.deallocate()
    }
}

/// The open connections, in a dense table indexed by the slot of their ``ConnectionID``: looking
/// a connection up is an index and a compare of the whole id, not a hash.
struct ConnectionSlots {
    /// ``TransportConfiguration/connectionTag``, in every id given out.
    var tag: UInt8 = 0
    private var slots: [Connection?] = []
    /// Each slot's hot state, for deliveries (nil when free).
    private var hots: [UnsafeMutablePointer<ConnectionHot>?] = []
    private var generations: [UInt32] = []
    private var free: [Int] = []
    private(set) var count = 0

    /// The id the next ``insert`` will use.
    func nextID() -> ConnectionID {
        let slot = free.last ?? slots.count
        let generation = slot < generations.count ? generations[slot] : 1
        return ConnectionID(tag: tag, generation: generation, slot: UInt32(slot))
    }

    mutating func insert(_ make: (ConnectionID) -> Connection) -> Connection {
        let id = nextID()
        let slot = id.slot
        let connection = make(id)
        if slot == slots.count {
            slots.append(connection)
            hots.append(connection.hot)
            generations.append(1)
        } else {
            free.removeLast()
            slots[slot] = connection
            hots[slot] = connection.hot
        }
        count += 1
        return connection
    }

    subscript(id: ConnectionID) -> Connection? {
        let slot = id.slot
        guard slot < slots.count, let connection = slots[slot], connection.id == id else { return nil }
        return connection
    }

    @discardableResult
    mutating func remove(_ id: ConnectionID) -> Connection? {
        guard let connection = self[id] else { return nil }
        let slot = id.slot
        slots[slot] = nil
        hots[slot] = nil
        generations[slot] = ConnectionID.generation(after: generations[slot])
        free.append(slot)
        count -= 1
        return connection
    }

    var isEmpty: Bool { count == 0 }

    /// The table's size, free slots included, and the connection in a slot: for a sweep.
    var slotCount: Int { slots.count }

    func connection(atSlot slot: Int) -> Connection? { slots[slot] }

    /// Every open connection.
    var all: some Sequence<Connection> { slots.lazy.compactMap { $0 } }

    /// Calls `body` with every slot's hot state (nil for free slots), indexed by slot: a
    /// delivery finds its connection's with an index and a compare of ids.
    func withHotStates<R>(_ body: (UnsafeBufferPointer<UnsafeMutablePointer<ConnectionHot>?>) -> R) -> R {
        hots.withUnsafeBufferPointer(body)
    }

    mutating func removeAll() {
        slots.removeAll()
        hots.removeAll()
        generations.removeAll()
        free.removeAll()
        count = 0
    }
}
