import MeridianClientTransport
import MeridianCore
import MeridianServer
import MeridianTesting
import MeridianTransport
import MeridianTransportCore
import Testing

/// What only the wire shows, over real sockets: the WebSocket handshake, frames the transport
/// refuses, the transport's per-connection queues, and a listener that must not open.
@Suite("The wire over real sockets")
struct WireTests {
    @Test func subprotocolIsRequired() throws {
        let server = try TestServer()
        defer { server.stop() }
        let socket = WebSocketClient(port: server.port, subprotocol: nil)
        #expect(throws: (any Error).self) { try socket.connect(timeout: .seconds(3)) }
        socket.close()
    }

    @Test func aBadHandshakeTokenRefusesTheUpgrade() async throws {
        let server = try await tokenServer()
        defer { server.stop() }
        #expect(throws: TransportError.self, "refused with 401 before the upgrade") {
            _ = try TestClient(port: server.port, headers: ["Authorization": "Bearer not-a-token"])
        }
    }

    @Test func noAuthenticationRefusesToBindBeyondLoopback() throws {
        var configuration = ServerConfiguration()
        configuration.transport.host = "0.0.0.0"
        configuration.transport.port = 0
        let server = MeridianServer(configuration: configuration)
        #expect(throws: ConfigurationError.self) { _ = try server.start() }
    }

    @Test func oversizedFrameClosesWith1009() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try server.joined("s", name: "Eve")
        client.sendText(#"{"type":"ping","ref":1,"pad":""# + String(repeating: "x", count: 2 << 20) + #""}"#)
        let closed = try client.waitFor { $0["type"]?.string == "$closed" }
        #expect(closed["code"]?.number == 1009)
    }

    // Welcomes into a session with many annotations share their annotation list: the list goes
    // out as fragments of the welcome that every joiner's queue holds by reference, exempt from
    // the per-connection queue limits while the shared frames stay within their budget.

    /// A session whose annotation list is about 80 KB (``SharedWelcomeTests/seed(_:)``).
    func seed(_ port: Int, _ session: String) throws -> TestClient {
        let owner = try TestClient(port: port)
        try owner.join(session, name: "Owner", role: "owner")
        try SharedWelcomeTests.seed(owner)
        return owner
    }

    @Test func joinersGetTheWholeSnapshotFromSharedFragmentsWithoutCountingAsBehind() throws {
        let server = try TestServer {
            $0.transport.queueHighWaterBytes = 16 * 1024
            $0.transport.queueHardLimitBytes = 32 * 1024
            $0.transport.slowConsumerGrace = .milliseconds(200)
        }
        defer { server.stop() }
        let owner = try seed(server.port, "big")
        let joiners = try (0..<6).map { _ in try TestClient(port: server.port) }
        for (i, joiner) in joiners.enumerated() { try joiner.join("big", name: "J\(i)", role: "viewer") }
        // Still connected, and served in order after the welcome.
        try SharedWelcomeTests.expectWholeSnapshots(joiners, owner: owner)
    }

    @Test func pastTheBudgetSharedFramesCountLikeAnyOther() throws {
        let server = try TestServer {
            $0.transport.queueHighWaterBytes = 16 * 1024
            $0.transport.queueHardLimitBytes = 32 * 1024
            $0.transport.sharedFrameBudgetBytes = 0
        }
        defer { server.stop() }
        let owner = try seed(server.port, "big")
        let joiner = try TestClient(port: server.port)
        joiner.send(.object(["type": .string("join"), "ref": .number(1), "session": .string("big"), "name": .string("J"), "role": .string("viewer")]))
        let closed = try joiner.next("$closed", timeout: .seconds(10)).message
        #expect(closed["code"] == .number(4008))
        #expect(try owner.request("ping")["type"]?.string == "ack")
    }
}
