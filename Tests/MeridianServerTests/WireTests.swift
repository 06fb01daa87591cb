import MeridianClientTransport
import MeridianCore
import MeridianTesting
import MeridianTransport
import MeridianTransportCore
import Testing

/// What only the wire shows, over real sockets: the WebSocket handshake, frames the transport
/// refuses, and the transport's per-connection queues.
@Suite("The wire over real sockets")
struct WireTests {
    @Test func subprotocolIsRequired() throws {
        let server = try TestServer()
        defer { server.stop() }
        let socket = WebSocketClient(port: server.port, subprotocol: nil)
        #expect(throws: (any Error).self) { try socket.connect(timeout: .seconds(3)) }
        socket.close()
    }
}
