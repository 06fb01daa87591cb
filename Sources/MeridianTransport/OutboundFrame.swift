internal import MeridianProtocol

/// The wire bytes of a pre-framed server->client WebSocket frame: immutable once built, so
/// they may be held and read on any thread. An ``OutboundFrame`` (a frame on one service
/// thread's queues) wraps them; the frames of several service threads may wrap the same bytes
/// (``OutboundFrame/init(relayed:ledger:)``), which are freed when the last of them goes.
public final class FrameBytes: Sendable {
    /// The buffer, header and payload from `start`. Written only by `init` and freed by
    /// `deinit`: between the two it is only read, from any thread (what makes this `Sendable`).
    private nonisolated(unsafe) let storage: UnsafeMutablePointer<UInt8>
    private let start: Int
    /// Header plus payload: what goes on the wire.
    public let byteCount: Int
    /// The payload length.
    public let payloadCount: Int
    /// The message's type as a position in `ServerMessage.types`, read from the payload's first
    /// bytes when the frame starts a text message; -1 for a continuation or an unknown type.
    public let messageType: Int8

    fileprivate init(buffer: UnsafeMutablePointer<UInt8>, count total: Int, opcodeAndFin: UInt8) {
        precondition(total >= OutboundFrame.headerRoom, "the payload must follow OutboundFrame.headerRoom reserved bytes")
        let count = total - OutboundFrame.headerRoom
        let headerLength = count < 126 ? 2 : count <= 0xFFFF ? 4 : 10
        let start = OutboundFrame.headerRoom - headerLength
        buffer[start] = opcodeAndFin
        if count < 126 {
            buffer[start + 1] = UInt8(count)
        } else if count <= 0xFFFF {
            buffer[start + 1] = 126
            buffer[start + 2] = UInt8(count >> 8)
            buffer[start + 3] = UInt8(count & 0xFF)
        } else {
            buffer[start + 1] = 127
            for i in 0..<8 { buffer[start + 2 + i] = UInt8((UInt64(count) >> UInt64(56 - 8 * i)) & 0xFF) }
        }
        self.storage = buffer
        self.start = start
        self.byteCount = total - start
        self.payloadCount = count
        self.messageType = Self.messageType(opcodeAndFin, UnsafeRawBufferPointer(start: buffer + OutboundFrame.headerRoom, count: count))
    }

    /// Bytes of a frame as ``wireBytes`` gave them, from another process: copied, header and
    /// all. Nil if they are not one whole unmasked frame.
    public init?(wire: [UInt8]) {
        guard wire.count >= 2, wire[1] & 0x80 == 0 else { return nil }
        let header: Int, count: Int
        switch wire[1] {
        case 126:
            guard wire.count >= 4 else { return nil }
            (header, count) = (4, Int(wire[2]) << 8 | Int(wire[3]))
        case 127:
            guard wire.count >= 10 else { return nil }
            (header, count) = (10, wire[2..<10].reduce(0) { $0 << 8 | Int($1) })
        default:
            (header, count) = (2, Int(wire[1]))
        }
        guard header + count == wire.count else { return nil }
        storage = .allocate(capacity: wire.count)
        storage.initialize(from: wire, count: wire.count)
        start = 0
        byteCount = wire.count
        payloadCount = count
        messageType = Self.messageType(wire[0], UnsafeRawBufferPointer(start: storage + header, count: count))
    }

    private static func messageType(_ opcodeAndFin: UInt8, _ payload: UnsafeRawBufferPointer) -> Int8 {
        guard opcodeAndFin & 0x0F == 1, let index = ServerMessage.typeIndex(of: payload) else { return -1 }
        return Int8(index)
    }

    deinit {
        storage.deallocate()
    }

    /// The wire bytes, copied: for a frame that leaves the process (``init(wire:)``).
    public var wireBytes: [UInt8] { withBytes { Array($0) } }

    /// The frame's opcode: 1 for a text message's first (or only) frame, 0 for a continuation.
    public var opcode: UInt8 { storage[start] & 0x0F }
    /// Whether the frame ends its message (FIN).
    public var isFinal: Bool { storage[start] & 0x80 != 0 }

    /// Calls `body` with the payload.
    public func withPayload<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        withBytes { bytes in body(UnsafeRawBufferPointer(rebasing: bytes[(byteCount - payloadCount)...])) }
    }

    /// Calls `body` with the wire bytes.
    @inline(__always)
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        body(UnsafeRawBufferPointer(start: storage + start, count: byteCount))
    }
}

/// A pre-framed server->client WebSocket frame (7/16/64-bit length, unmasked), built once and
/// shared by every recipient on its service thread.
///
/// Server frames are never masked, so the same bytes are valid on every connection
/// that did not negotiate an extension; the server writes them with `LWS_WRITE_RAW`.
/// A message is usually one final text frame; a large message that is mostly shared
/// between recipients (a snapshot) can be sent as fragments, some of them shared
/// (``init(takingBuffer:count:first:last:shared:)``).
///
/// A frame belongs to the service thread that queues it, which alone touches its bookkeeping
/// (``holders``, ``superseded``, ``relayToken``): it is not `Sendable`. What crosses to another
/// service thread is its ``relayable`` part, immutable bytes that frame wraps without a copy.
public final class OutboundFrame {
    /// Room to leave in front of a payload for the header: the longest header.
    public static let headerRoom = 10

    /// The wire bytes, which other service threads' frames may share.
    public let wire: FrameBytes
    /// Header plus payload: what goes on the wire.
    public let byteCount: Int
    /// The payload length.
    public let payloadCount: Int
    /// How many connection queues hold this frame; touched only on the server's service
    /// thread, by ``ConnectionQueue`` (which retains the frame once while this is above zero).
    var holders = 0
    /// True while a connection's queue holds the frame (it is not all written yet).
    public var isQueued: Bool { holders > 0 }
    /// Set on the service thread when a newer frame of the same transient kind was queued
    /// behind this one for everyone who holds it: queues then skip it instead of writing it.
    var superseded = false
    /// Where a shared frame is accounted (see ``SharedFrameLedger``); nil for ordinary frames.
    let ledger: SharedFrameLedger?
    /// The frame's name on the way to another service thread's queues (see the server's relay);
    /// read and written only by the thread that created the frame.
    public var relayToken: UInt64?

    /// Frames `payload` (which must be UTF-8 text) as one final text frame.
    public convenience init(text payload: [UInt8]) {
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: Self.headerRoom + payload.count)
        payload.withUnsafeBufferPointer { source in
            if let base = source.baseAddress { (buffer + Self.headerRoom).initialize(from: base, count: source.count) }
        }
        self.init(takingBuffer: buffer, count: Self.headerRoom + payload.count)
    }

    /// What of this frame may go to another service thread: its bytes, and whether it is shared.
    public var relayable: RelayableFrame {
        RelayableFrame(wire: wire, isShared: ledger != nil)
    }

    /// A frame of this service thread around bytes from another one (``relayable``), for this
    /// thread's queues (which count their holders on the frame): the bytes are not copied. A
    /// shared frame is accounted in `ledger`, as the frame it came from was in its own.
    public init(relayed: RelayableFrame, ledger: SharedFrameLedger?) {
        self.wire = relayed.wire
        self.byteCount = relayed.wire.byteCount
        self.payloadCount = relayed.wire.payloadCount
        self.ledger = relayed.isShared ? ledger : nil
        self.ledger?.add(byteCount)
    }

    /// Frames the UTF-8 encoding of `text`.
    public convenience init(text: String) {
        self.init(text: Array(text.utf8))
    }

    /// A final text frame around a payload written into `buffer` after ``headerRoom`` reserved
    /// bytes, which the header goes into: nothing is copied. The frame owns `buffer` (allocated
    /// with `UnsafeMutablePointer<UInt8>.allocate`) and frees it.
    public convenience init(takingBuffer buffer: UnsafeMutablePointer<UInt8>, count: Int) {
        self.init(buffer: buffer, count: count, opcodeAndFin: 0x81, ledger: nil)
    }

    /// One fragment of a text message, taking its buffer as ``init(takingBuffer:count:)`` does:
    /// the first fragment has the text opcode, the others are continuations; the last has FIN.
    /// A message's fragments must be queued back to back. With a `ledger`, the frame is shared:
    /// many connections queue it, and its memory is accounted there.
    public convenience init(
        takingBuffer buffer: UnsafeMutablePointer<UInt8>, count: Int, first: Bool, last: Bool, shared ledger: SharedFrameLedger? = nil
    ) {
        self.init(buffer: buffer, count: count, opcodeAndFin: (first ? 0x01 : 0x00) | (last ? 0x80 : 0x00), ledger: ledger)
    }

    private convenience init(buffer: UnsafeMutablePointer<UInt8>, count total: Int, opcodeAndFin: UInt8, ledger: SharedFrameLedger?) {
        self.init(relayed: RelayableFrame(
            wire: FrameBytes(buffer: buffer, count: total, opcodeAndFin: opcodeAndFin), isShared: ledger != nil), ledger: ledger)
    }

    deinit {
        ledger?.remove(byteCount)
    }

    /// The wire bytes (a copy).
    public var bytes: [UInt8] { wire.withBytes { Array($0) } }

    /// Calls `body` with the wire bytes.
    @inline(__always)
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        wire.withBytes(body)
    }
}

/// A frame on its way to another service thread: its immutable bytes, and whether it is a
/// shared frame (accounted in the receiving server's ``SharedFrameLedger``).
public struct RelayableFrame: Sendable {
    public let wire: FrameBytes
    public let isShared: Bool

    public init(wire: FrameBytes, isShared: Bool) {
        self.wire = wire
        self.isShared = isShared
    }
}
