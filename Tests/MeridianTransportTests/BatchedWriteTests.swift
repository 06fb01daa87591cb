import Foundation
@testable import MeridianTransport
import MeridianTransportCore
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// End-of-pass writes made a batch at a time (``SendRing``, io_uring): each write's result comes
/// back as its socket answered, and a fan-out written in batches reaches every member whole and
/// in order, including members whose sockets take only part of it.
@Suite(.serialized) struct BatchedWriteTests {
    private typealias Recorder = InputFairnessTests.Recorder

    @Test func eachWriteOfABatchAnswersWhatItsSocketDid() throws {
        var failure: Int32 = 0
        let ring = try #require(SendRing(capacity: 4, failure: &failure), "io_uring unavailable: errno \(failure)")
        let open = try SocketPair()
        let gone = try SocketPair()
        let full = try SocketPair()
        defer { [open, gone, full].forEach { $0.close() } }
        gone.closePeer()
        full.fill()
        let bytes: [UInt8] = Array("hello".utf8)
        var results: [Int: Int32] = [:]
        bytes.withUnsafeBytes { hello in
            for (place, pair) in [open, gone, full].enumerated() {
                #expect(ring.queue(socket: pair.socket, bytes: hello.baseAddress!, length: hello.count) == place)
            }
            #expect(ring.count == 3)
            #expect(ring.flush { place, result in results[place] = result })
        }
        #expect(results == [0: 5, 1: -EPIPE, 2: -EAGAIN])
        #expect(ring.count == 0)
        #expect(open.read() == bytes)
    }

    @Test func aFanOutIsWrittenInBatchesAndReachesEveryMemberInOrder() throws {
        let (stats, texts) = try fanOut(members: 30, frames: 3) { _ in }
        #expect(texts.allSatisfy { $0 == ["b0", "b1", "b2"] })
        #expect(stats.writeBatchFailure == 0)
        #expect(stats.batchedWrites == 30, "every member's end-of-pass write went in a batch")
        #expect(stats.batchedWritesHandedOn == 0)
        #expect(stats.deliveries == 30 * 3)
    }

    @Test func whatASocketDoesNotTakeFromABatchIsFinishedByLws() throws {
        // The server's send buffers and the members' receive buffers are small, and no member
        // reads until the whole fan-out is queued: each one's first write (about 240 kB) is taken
        // only in part; lws holds the rest and writes it as the member reads.
        let frames = 30_000
        let (stats, texts) = try fanOut(members: 3, frames: frames, receiveBuffer: 4096) {
            $0.socketSendBuffer = 16 << 10
            $0.queueHighWaterBytes = 64 << 20
        }
        let expected = (0..<frames).map { "b\($0)" }
        for (i, received) in texts.enumerated() {
            #expect(received.count == frames, "member \(i)")
            let inOrder = received.elementsEqual(expected)
            #expect(inOrder, "member \(i): every frame once, in order")
        }
        #expect(stats.batchedWrites >= 3)
        #expect(stats.batchedWritesHandedOn >= 1, "a short write was handed to lws")
        #expect(stats.deliveries == 3 * frames)
    }

    @Test func withoutBatchesEachEndOfPassWriteIsMadeOnItsOwn() throws {
        let (stats, texts) = try fanOut(members: 30, frames: 3) { $0.writeBatch = 1 }
        #expect(texts.allSatisfy { $0 == ["b0", "b1", "b2"] })
        #expect(stats.batchedWrites == 0)
        #expect(stats.directWrites == 30)
        #expect(stats.deliveries == 30 * 3)
    }

    /// `fan:frames` from the first of `members` quiet members: what each received, and the
    /// server's stats after.
    private func fanOut(
        members count: Int, frames: Int, receiveBuffer: Int32? = nil,
        _ configure: (inout TransportConfiguration) -> Void
    ) throws -> (TransportStats, [[String]]) {
        let recorder = Recorder()
        var configuration = TransportConfiguration()
        configuration.port = 0
        configure(&configuration)
        let server = WebSocketServer(configuration: configuration, handler: recorder)
        let port = try server.start()
        defer { server.stop() }
        let members = try (0..<count).map { _ in try RawWebSocket(port: port, receiveBuffer: receiveBuffer) }
        #expect(recorder.waitOpened(count))
        try members[0].send(["fan:\(frames)"])
        let texts = try members.map { try $0.receiveTexts(count: frames) }
        return (onServiceThread(server) { $0.stats }, texts)
    }
}

/// Two connected Unix stream sockets: `socket` is written, `peer` read.
private final class SocketPair {
    let socket: Int32
    private(set) var peer: Int32

    init() throws {
        var ends: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0 else {
            throw TransportError.connectFailed("socketpair")
        }
        (socket, peer) = (ends[0], ends[1])
    }

    /// Writes until the socket takes no more.
    func fill() {
        let chunk = [UInt8](repeating: 0, count: 65536)
        while chunk.withUnsafeBytes({ Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
    }

    func closePeer() {
        if peer >= 0 { Glibc.close(peer) }
        peer = -1
    }

    func close() {
        Glibc.close(socket)
        closePeer()
    }

    /// What the peer has to read.
    func read() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: 64)
        let n = recv(peer, &bytes, bytes.count, Int32(MSG_DONTWAIT))
        return n > 0 ? Array(bytes[..<n]) : []
    }
}
