import Foundation
import MeridianClientTransport
@testable import MeridianTransport
import MeridianTransportCore
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite(.serialized) struct HandshakeTimeoutTests {
    /// A slowloris client (TCP open, part of a request, then nothing) is dropped after the
    /// handshake timeout, while a well-behaved client connects and talks meanwhile.
    @Test(arguments: ["GET / HTTP/1.1\r\nHost: x\r\nUpgrade: web", ""])
    func aStalledRequestIsDroppedAfterTheTimeout(partial: String) throws {
        let (server, _, port) = try startServer { $0.handshakeTimeout = .seconds(2) }
        defer { server.stop() }
        let stalled = try RawSocket(port: port)
        let start = ContinuousClock.now
        try stalled.send(partial)

        let good = WebSocketClient(port: port)
        try good.connect()
        defer { good.close() }
        good.send("meanwhile")
        #expect(try good.receive() == .text("meanwhile"))

        let ended = stalled.waitForEOF(deadline: .seconds(15))
        let elapsed = ContinuousClock.now - start
        #expect(ended, "the stalled connection was not dropped within 15 s")
        // lws checks timeouts once a second.
        #expect(elapsed >= .milliseconds(1500) && elapsed <= .seconds(5), "dropped after \(elapsed)")
        good.send("still here")
        #expect(try good.receive() == .text("still here"))
    }
}

/// A bare TCP connection to 127.0.0.1.
final class RawSocket {
    let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard fd >= 0, connected == 0 else { throw TransportError.connectFailed("connect") }
    }

    deinit { Glibc.close(fd) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard !bytes.isEmpty else { return }
        guard Glibc.send(fd, bytes, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count else {
            throw TransportError.connectFailed("send")
        }
    }

    /// Blocks in poll until the peer closes (EOF or reset) or `deadline` passes; true on close.
    func waitForEOF(deadline: Duration) -> Bool {
        let end = ContinuousClock.now + deadline
        var buffer = [UInt8](repeating: 0, count: 4096)
        while ContinuousClock.now < end {
            let left = end - ContinuousClock.now
            var entry = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&entry, 1, Int32(max(1, left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000)))
            if ready < 0 { return false }
            if ready == 0 { continue }
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { return true }
        }
        return false
    }
}
