/// An immutable, pre-framed server->client WebSocket text frame (FIN + text opcode,
/// 7/16/64-bit length, unmasked), built once and shared by every recipient.
///
/// Server frames are never masked, so the same bytes are valid on every connection
/// that did not negotiate an extension; the server writes them with `LWS_WRITE_RAW`.
public final class OutboundFrame: @unchecked Sendable {
    /// Header followed by payload: exactly what goes on the wire.
    public let bytes: [UInt8]
    /// The payload length.
    public let payloadCount: Int
    /// How many connection queues hold this frame; touched only on the server's service
    /// thread, by ``ConnectionQueue`` (which retains the frame once while this is above zero).
    var holders = 0

    /// Frames `payload` (which must be UTF-8 text) as one final text frame.
    public init(text payload: [UInt8]) {
        let count = payload.count
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count + 10)
        bytes.append(0x81)  // FIN | opcode 1 (text)
        if count < 126 {
            bytes.append(UInt8(count))
        } else if count <= 0xFFFF {
            bytes.append(126)
            bytes.append(UInt8(count >> 8))
            bytes.append(UInt8(count & 0xFF))
        } else {
            bytes.append(127)
            for shift in stride(from: 56, through: 0, by: -8) {
                bytes.append(UInt8((UInt64(count) >> UInt64(shift)) & 0xFF))
            }
        }
        bytes.append(contentsOf: payload)
        self.bytes = bytes
        self.payloadCount = count
    }

    /// Frames the UTF-8 encoding of `text`.
    public convenience init(text: String) {
        self.init(text: Array(text.utf8))
    }
}
