import Foundation
import Testing
@testable import MeridianClientTransport

private let upgrade = Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Protocol: meridian.v1\r\n\r\n".utf8)

/// An unmasked server frame.
private func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true) -> [UInt8] {
    var out: [UInt8] = [(fin ? 0x80 : 0) | opcode]
    switch payload.count {
    case ..<126: out.append(UInt8(payload.count))
    case ..<65_536: out += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
    default:
        out.append(127)
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8((payload.count >> shift) & 0xFF)) }
    }
    return out + payload
}

enum Seen: Equatable {
    case upgraded, text(String), ping([UInt8]), close(UInt16?), failure
}

/// Feeds `stream` cut into chunks of `size` bytes; returns what was emitted and whether reading went on.
private func read(_ stream: [UInt8], chunk size: Int, keptPrefix: Int? = nil) -> (seen: [Seen], ok: Bool) {
    var reader = FrameReader(maxMessageBytes: 1 << 20, keptPrefix: keptPrefix)
    var seen: [Seen] = []
    var offset = 0
    while offset < stream.count {
        let end = min(offset + size, stream.count)
        let ok = stream[offset..<end].withUnsafeBytes { chunk in
            reader.feed(chunk, subprotocol: "meridian.v1") { f in
                switch f {
                case .upgraded: seen.append(.upgraded)
                case .text(let b): seen.append(.text(String(decoding: b, as: UTF8.self)))
                case .ping(let b): seen.append(.ping(Array(b)))
                case .close(let code): seen.append(.close(code))
                case .failure: seen.append(.failure)
                }
            }
        }
        if !ok { return (seen, false) }
        offset = end
    }
    return (seen, true)
}

@Suite("Client framing of the load generator's connections")
struct ClientFramingTests {
    static let medium = String(repeating: "m", count: 300)
    static let large = String(repeating: "L", count: 70_000)
    static let stream: [UInt8] = upgrade + frame(1, Array("{\"a\":1}".utf8)) + frame(9, [1, 2]) + frame(1, Array(medium.utf8))
        + frame(1, Array("frag".utf8), fin: false) + frame(0, Array("mented".utf8)) + frame(10, []) + frame(2, [0xFF])
        + frame(1, Array(large.utf8)) + frame(8, [0x03, 0xE9, 0x62, 0x79, 0x65])
    static let expected: [Seen] = [.upgraded, .text("{\"a\":1}"), .ping([1, 2]), .text(medium), .text("fragmented"), .text(large), .close(1001)]

    @Test(arguments: [1, 2, 3, 7, 64, 1_000, 65_536, 1 << 20])
    func everyChunkingGivesTheSameMessages(chunk: Int) {
        let (seen, ok) = read(Self.stream, chunk: chunk)
        #expect(ok)
        #expect(seen == Self.expected)
    }

    /// A fragmented message whose later continuations lie wholly past the kept prefix (they are
    /// passed over, not buffered), then an ordinary message.
    static let keptPrefixStream = upgrade + frame(1, Array("head-".utf8), fin: false)
        + frame(0, Array(String(repeating: "x", count: 5_000).utf8), fin: false)
        + frame(0, Array(String(repeating: "y", count: 70_000).utf8), fin: false)
        + frame(0, Array("-end".utf8)) + frame(1, Array(medium.utf8))

    @Test(arguments: [1, 7, 100, 4_096, 65_536, 1 << 20])
    func aKeptPrefixCutsFragmentedMessagesOnly(chunk: Int) {
        let (seen, ok) = read(Self.keptPrefixStream, chunk: chunk, keptPrefix: 8)
        #expect(ok)
        #expect(seen == [.upgraded, .text("head-xxx"), .text(Self.medium)])
    }

    @Test(arguments: [7, 4_096])
    func theLimitCountsWhatAKeptPrefixDrops(chunk: Int) {
        let kept = upgrade + frame(1, Array("a".utf8), fin: false) + frame(0, [UInt8](repeating: 0x78, count: 1 << 20))
        #expect(read(kept, chunk: chunk, keptPrefix: 8) == ([.upgraded, .failure], false))
        let passedOver = upgrade + frame(1, Array("abcdefgh".utf8), fin: false) + frame(0, [UInt8](repeating: 0x78, count: 1 << 20))
        #expect(read(passedOver, chunk: chunk, keptPrefix: 8) == ([.upgraded, .failure], false))
    }

    @Test func aMaskedServerFrameIsAFailure() {
        var masked = frame(1, Array("x".utf8))
        masked[1] |= 0x80
        let (seen, ok) = read(upgrade + masked + [0, 0, 0, 0], chunk: 4_096)
        #expect(!ok)
        #expect(seen == [.upgraded, .failure])
    }

    @Test func aRefusedUpgradeIsAFailure() {
        let refused = Array("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n".utf8)
        #expect(read(refused, chunk: 10) == ([.failure], false))
        let wrongProtocol = Array("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n".utf8)
        #expect(read(wrongProtocol, chunk: 4_096) == ([.failure], false))
    }

    @Test func clientFramesAreMaskedAndDecodeBack() {
        for size in [0, 5, 125, 126, 65_535, 65_536, 70_000] {
            let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 * 7) }
            var out: [UInt8] = []
            payload.withUnsafeBytes { FrameWriter.append(opcode: FrameWriter.text, payload: $0, mask: 0xA1B2_C3D4, to: &out) }
            #expect(out[0] == 0x81)
            #expect(out[1] & 0x80 != 0, "client frames are masked")
            var unmaskedHeader = out
            unmaskedHeader[1] &= 0x7F
            let header = FrameReader.frameLength(unmaskedHeader)! - size
            #expect(out.count == header + 4 + size)
            let key = Array(out[header..<(header + 4)])
            #expect(key == [0xA1, 0xB2, 0xC3, 0xD4])
            let decoded = out[(header + 4)...].enumerated().map { $0.element ^ key[$0.offset & 3] }
            #expect(decoded == payload)
        }
    }

    @Test func theUpgradeRequestOffersTheSubprotocol() {
        let request = String(decoding: FrameWriter.upgradeRequest(host: "h", port: 1, path: "/p", subprotocol: "meridian.v1", key: Array(0..<16)), as: UTF8.self)
        #expect(request.hasPrefix("GET /p HTTP/1.1\r\nHost: h:1\r\n"))
        #expect(request.contains("\r\nSec-WebSocket-Key: AAECAwQFBgcICQoLDA0ODw==\r\n"))
        #expect(request.contains("\r\nSec-WebSocket-Protocol: meridian.v1\r\n"))
        #expect(request.hasSuffix("\r\n\r\n"))
    }
}
