/// An immutable, pre-framed server->client WebSocket frame (7/16/64-bit length, unmasked),
/// built once and shared by every recipient.
///
/// Server frames are never masked, so the same bytes are valid on every connection
/// that did not negotiate an extension; the server writes them with `LWS_WRITE_RAW`.
/// A message is usually one final text frame; a large message that is mostly shared
/// between recipients (a snapshot) can be sent as fragments, some of them shared
/// (``init(reservedHeader:first:last:shared:)``).
public final class OutboundFrame: @unchecked Sendable {
    /// Room to leave in front of a payload for ``init(reservedHeader:)``: the longest header.
    public static let headerRoom = 10

    /// Header and payload start at `start`.
    private let storage: [UInt8]
    private let start: Int
    /// The payload length.
    public let payloadCount: Int
    /// Header plus payload: what goes on the wire.
    public var byteCount: Int { storage.count - start }
    /// How many connection queues hold this frame; touched only on the server's service
    /// thread, by ``ConnectionQueue`` (which retains the frame once while this is above zero).
    var holders = 0
    /// Set on the service thread when a newer frame of the same transient kind was queued
    /// behind this one for everyone who holds it: queues then skip it instead of writing it.
    var superseded = false
    /// Where a shared frame is accounted (see ``SharedFrameLedger``); nil for ordinary frames.
    let ledger: SharedFrameLedger?

    /// Frames `payload` (which must be UTF-8 text) as one final text frame.
    public convenience init(text payload: [UInt8]) {
        var storage = [UInt8](repeating: 0, count: Self.headerRoom)
        storage.reserveCapacity(Self.headerRoom + payload.count)
        storage.append(contentsOf: payload)
        self.init(reservedHeader: storage)
    }

    /// Frames the UTF-8 encoding of `text`.
    public convenience init(text: String) {
        self.init(text: Array(text.utf8))
    }

    /// A final text frame around a payload written after ``headerRoom`` reserved bytes, which
    /// the header goes into: the payload is not copied.
    public convenience init(reservedHeader storage: [UInt8]) {
        self.init(reservedHeader: storage, opcodeAndFin: 0x81)
    }

    /// One fragment of a text message, its payload written after ``headerRoom`` reserved
    /// bytes: the first fragment has the text opcode, the others are continuations; the last
    /// has FIN. A message's fragments must be queued back to back. With a `ledger`, the frame
    /// is shared: many connections queue it, and its memory is accounted there.
    public convenience init(reservedHeader storage: [UInt8], first: Bool, last: Bool, shared ledger: SharedFrameLedger? = nil) {
        self.init(reservedHeader: storage, opcodeAndFin: (first ? 0x01 : 0x00) | (last ? 0x80 : 0x00), ledger: ledger)
    }

    private init(reservedHeader storage: [UInt8], opcodeAndFin: UInt8, ledger: SharedFrameLedger? = nil) {
        precondition(storage.count >= Self.headerRoom, "the payload must follow OutboundFrame.headerRoom reserved bytes")
        var storage = storage
        let count = storage.count - Self.headerRoom
        let headerLength = count < 126 ? 2 : count <= 0xFFFF ? 4 : 10
        let start = Self.headerRoom - headerLength
        storage[start] = opcodeAndFin
        if count < 126 {
            storage[start + 1] = UInt8(count)
        } else if count <= 0xFFFF {
            storage[start + 1] = 126
            storage[start + 2] = UInt8(count >> 8)
            storage[start + 3] = UInt8(count & 0xFF)
        } else {
            storage[start + 1] = 127
            for i in 0..<8 { storage[start + 2 + i] = UInt8((UInt64(count) >> UInt64(56 - 8 * i)) & 0xFF) }
        }
        self.storage = storage
        self.start = start
        self.payloadCount = count
        self.ledger = ledger
        ledger?.add(storage.count - start)
    }

    deinit {
        ledger?.remove(byteCount)
    }

    /// The wire bytes (a copy).
    public var bytes: [UInt8] { Array(storage[start...]) }

    /// Calls `body` with the wire bytes.
    @inline(__always)
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        storage.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[start...])) }
    }
}
