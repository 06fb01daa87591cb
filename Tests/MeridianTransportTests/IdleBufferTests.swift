import Foundation
import MeridianClientTransport
@testable import MeridianTransport
import Testing

@Suite("Idle connections give back their buffers")
struct IdleBufferTests {
    @Test func aConnectionQuietForASecondReleasesItsWriteBufferAndStillWorks() throws {
        let (server, handler, port) = try startServer()
        defer { server.stop() }
        let client = WebSocketClient(port: port)
        try client.connect()
        defer { client.close() }
        client.send("hello")
        #expect(try client.receive() == .text("hello"))
        #expect(onServiceThread(server) { server in server.stats.writeBufferBytes } > 0, "a connection that wrote holds a buffer")

        // Each tick reports the buffers held; wait (on a condition, with a deadline) until none.
        let released = ResultBox<Bool>()
        // Set on the service thread, which reads it on every tick.
        server.execute { _ in
            handler.onTick = { server in if server.stats.writeBufferBytes == 0 { released.set(true) } }
        }
        #expect(released.get(timeout: 5) == true, "released after a quiet second")
        server.execute { _ in handler.onTick = nil }

        // The next write allocates again and arrives intact.
        let big = String(repeating: "x", count: 60_000)
        client.send(big)
        #expect(try client.receive() == .text(big))
    }
}
