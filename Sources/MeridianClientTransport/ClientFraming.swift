import Foundation

/// The client side of RFC 6455 framing for ``WebSocketClientGroup``, whose
/// connections are raw lws sockets: lws moves the bytes, these types turn them
/// into messages. Reading a whole socket buffer and walking its frames costs far
/// less per message than lws's byte-at-a-time client parser, which matters when
/// one load generator must read more messages than a server core sends.

/// What a server sent, as the group acts on it.
enum ServerFrame {
    /// The server accepted the upgrade.
    case upgraded
    /// A whole text message (valid only during the call).
    case text(UnsafeRawBufferPointer)
    case ping(UnsafeRawBufferPointer)
    case close(code: UInt16?)
    /// A violation of the protocol (a masked or oversized frame, a bad opcode, a failed upgrade).
    case failure(String)
}

/// Reads the HTTP upgrade answer, then frames, from chunks of a byte stream.
struct FrameReader {
    /// Before the upgrade is answered: the answer's bytes so far.
    private var response: [UInt8]? = []
    /// The start of a frame that continues in a later chunk.
    private var partial: [UInt8] = []
    /// Text of a fragmented message so far (at most `keptPrefix` bytes of it).
    private var message: [UInt8] = []
    /// Bytes of the fragmented message so far, kept or not.
    private var messageBytes = 0
    private var inFragmentedMessage = false
    let maxMessageBytes: Int
    /// A fragmented message is delivered cut to its first this-many bytes.
    let keptPrefix: Int

    init(maxMessageBytes: Int = 64 << 20, keptPrefix: Int? = nil) {
        self.maxMessageBytes = maxMessageBytes
        self.keptPrefix = keptPrefix ?? maxMessageBytes
    }

    /// A continuation frame past the kept prefix, whose payload is being passed over: the
    /// bytes still to come, and whether it ends its message.
    private var skipping: (remaining: Int, fin: Bool)?

    var upgraded: Bool { response == nil }
    /// Whether a frame has begun and not yet ended.
    var midFrame: Bool { !partial.isEmpty || skipping != nil }

    /// Feeds one chunk; `emit` is called for every complete frame. Returns false after a failure.
    mutating func feed(_ chunk: UnsafeRawBufferPointer, subprotocol: String, _ emit: (ServerFrame) -> Void) -> Bool {
        var bytes = chunk[...]
        if response != nil {
            switch readUpgrade(bytes, subprotocol: subprotocol) {
            case .incomplete: return true
            case .failed(let why): emit(.failure(why)); return false
            case .done(let consumed):
                bytes = bytes.dropFirst(consumed)
                emit(.upgraded)
            }
        }
        if let skip = skipping {
            let take = min(skip.remaining, bytes.count)
            bytes = bytes.dropFirst(take)
            guard take == skip.remaining else { skipping = (skip.remaining - take, skip.fin); return true }
            skipping = nil
            if skip.fin { endFragmentedMessage(emit) }
        }
        if !partial.isEmpty {
            // Complete the frame begun in an earlier chunk, then go on in this one.
            while Self.frameLength(partial) == nil, let byte = bytes.popFirst() { partial.append(byte) }
            guard let length = Self.frameLength(partial) else { return true }
            let take = min(length - partial.count, bytes.count)
            partial.append(contentsOf: bytes.prefix(take))
            bytes = bytes.dropFirst(take)
            guard partial.count == length else { return true }
            let frame = partial
            partial.removeAll(keepingCapacity: true)
            guard frame.withUnsafeBytes({ handle($0[...], emit) }) else { return false }
        }
        while !bytes.isEmpty {
            guard let length = Self.frameLength(bytes), bytes.count >= length else {
                if let length = Self.frameLength(bytes), let skip = passOver(bytes, length: length) {
                    // Nothing of this frame is kept: pass over its payload instead of buffering it.
                    guard skip else { emit(.failure("message too big")); return false }
                    return true
                }
                partial.append(contentsOf: bytes)
                return true
            }
            guard handle(bytes.prefix(length), emit) else { return false }
            bytes = bytes.dropFirst(length)
        }
        return true
    }

    private enum Upgrade {
        case incomplete
        case failed(String)
        /// The answer ended `consumed` bytes into the chunk.
        case done(consumed: Int)
    }

    /// Reads the upgrade answer from `bytes`, the chunk after what was read before.
    private mutating func readUpgrade(_ bytes: Slice<UnsafeRawBufferPointer>, subprotocol: String) -> Upgrade {
        let before = response!.count
        response!.append(contentsOf: bytes)
        guard let end = Self.headerEnd(response!) else {
            return response!.count > 16_384 ? .failed("upgrade answer too long") : .incomplete
        }
        let head = String(decoding: response![..<end], as: UTF8.self).lowercased()
        guard head.hasPrefix("http/1.1 101") else { return .failed(String(head.prefix(while: { $0 != "\r" }))) }
        guard head.contains("\r\nsec-websocket-protocol: \(subprotocol.lowercased())") else {
            return .failed("the server did not accept subprotocol \(subprotocol)")
        }
        response = nil
        return .done(consumed: end + 4 - before)
    }

    /// Handles one whole frame.
    private mutating func handle(_ frame: Slice<UnsafeRawBufferPointer>, _ emit: (ServerFrame) -> Void) -> Bool {
        let b0 = frame[frame.startIndex], b1 = frame[frame.startIndex + 1]
        guard b1 & 0x80 == 0 else { emit(.failure("a masked frame from the server")); return false }
        let header = Self.headerLength(b1)
        let payload = UnsafeRawBufferPointer(rebasing: frame.dropFirst(header))
        let fin = b0 & 0x80 != 0
        switch b0 & 0x0F {
        case 0x1 where fin && !inFragmentedMessage:
            emit(.text(payload))
        case 0x1, 0x0:
            if b0 & 0x0F == 0x1 { message.removeAll(keepingCapacity: true); messageBytes = 0; inFragmentedMessage = true }
            guard inFragmentedMessage else { emit(.failure("a continuation without a message")); return false }
            messageBytes += payload.count
            guard messageBytes <= maxMessageBytes else { emit(.failure("message too big")); return false }
            message.append(contentsOf: payload.prefix(max(0, keptPrefix - message.count)))
            if fin { endFragmentedMessage(emit) }
        case 0x2, 0xA:
            break  // Binary messages are not part of the protocol; pongs need no answer.
        case 0x8:
            emit(.close(code: payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil))
        case 0x9:
            emit(.ping(payload))
        default:
            emit(.failure("opcode \(b0 & 0x0F)"))
            return false
        }
        return true
    }

    private mutating func endFragmentedMessage(_ emit: (ServerFrame) -> Void) {
        inFragmentedMessage = false
        message.withUnsafeBytes { emit(.text($0)) }
    }

    /// For a frame of `length` bytes whose header (not its whole payload) is in `bytes`: when it is
    /// a continuation of a message whose kept prefix is full, starts passing over it and returns
    /// true (false when the message grows past the limit); nil when the frame must be buffered.
    private mutating func passOver(_ bytes: Slice<UnsafeRawBufferPointer>, length: Int) -> Bool? {
        let b0 = bytes[bytes.startIndex], b1 = bytes[bytes.startIndex + 1]
        guard b0 & 0x0F == 0x0, b1 & 0x80 == 0, inFragmentedMessage, message.count >= keptPrefix else { return nil }
        let header = Self.headerLength(b1)
        messageBytes += length - header
        guard messageBytes <= maxMessageBytes else { return false }
        skipping = (length - bytes.count, b0 & 0x80 != 0)
        return true
    }

    private static func headerLength(_ b1: UInt8) -> Int {
        switch b1 & 0x7F {
        case 126: 4
        case 127: 10
        default: 2
        }
    }

    /// The length of the frame starting `bytes` (header and payload), or nil if its header is incomplete.
    static func frameLength<C: Collection>(_ bytes: C) -> Int? where C.Element == UInt8, C.Index == Int {
        guard bytes.count >= 2 else { return nil }
        let s = bytes.startIndex
        let b1 = bytes[s + 1]
        let header = headerLength(b1)
        guard bytes.count >= header else { return nil }
        var length = 0
        switch b1 & 0x7F {
        case 126: length = Int(bytes[s + 2]) << 8 | Int(bytes[s + 3])
        case 127: for i in 2..<10 { length = length << 8 | Int(bytes[s + i]) }
        case let n: length = Int(n)
        }
        return header + length
    }

    private static func headerEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4) where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i
        }
        return nil
    }
}

/// Client frames: masked, as RFC 6455 requires of clients.
enum FrameWriter {
    static let text: UInt8 = 0x1, close: UInt8 = 0x8, pong: UInt8 = 0xA

    /// Appends one final frame with `opcode` and `payload`, masked with `mask`.
    static func append(opcode: UInt8, payload: UnsafeRawBufferPointer, mask: UInt32, to out: inout [UInt8]) {
        out.append(0x80 | opcode)
        switch payload.count {
        case ..<126: out.append(0x80 | UInt8(payload.count))
        case ..<65_536: out += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        default:
            out.append(0x80 | 127)
            for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((payload.count >> shift) & 0xFF)) }
        }
        let key = [UInt8(mask >> 24), UInt8((mask >> 16) & 0xFF), UInt8((mask >> 8) & 0xFF), UInt8(mask & 0xFF)]
        out += key
        for (i, byte) in payload.enumerated() { out.append(byte ^ key[i & 3]) }
    }

    /// The HTTP request that opens a WebSocket with `subprotocol` (RFC 6455 §4.1).
    static func upgradeRequest(host: String, port: Int, path: String, subprotocol: String, key: [UInt8]) -> [UInt8] {
        let request = "GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: \(Data(key).base64EncodedString())\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: \(subprotocol)\r\n\r\n"
        return Array(request.utf8)
    }
}
