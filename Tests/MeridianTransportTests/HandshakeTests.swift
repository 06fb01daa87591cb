import Foundation
import MeridianClientTransport
@testable import MeridianTransport
import MeridianTransportCore
import Testing
import MeridianTesting

@Suite(.serialized) struct HandshakeTests {
    @Test func theHandlerSeesHeadersPathAndDecodedQuery() throws {
        let (server, handler, port) = try startServer { $0.allowedOrigins = ["https://app.example"] }
        defer { server.stop() }
        let client = WebSocketClient(
            port: port, path: "/live?access_token=a%20b%2Bc&room=7",
            headers: ["Authorization": "Bearer token-1", "Origin": "https://app.example"])
        try client.connect()
        defer { client.close() }
        #expect(handler.wait { opened, _ in opened.count == 1 })
        let handshake = try #require(handler.handshakes[handler.opened[0]])
        #expect(handshake.peer == "127.0.0.1")
        #expect(handshake.authorization == "Bearer token-1")
        #expect(handshake.path == "/live")
        #expect(handshake.query == ["access_token": "a b+c", "room": "7"])
        #expect(handshake.host == "127.0.0.1")
        #expect(handshake.origin == "https://app.example")
    }

    @Test func aRefusalGivesTheClientItsStatusAndNoConnectionOpens() throws {
        let handler = EchoHandler()
        handler.verdict = { $0.authorization == "Bearer good" ? .accept : .refuse(status: 401, reason: "bad \"token\"") }
        let (server, _, port) = try startServer(handler: handler)
        defer { server.stop() }
        let refused = try upgradeAnswer(port: port, headers: "Authorization: Bearer bad\r\n")
        #expect(refused.status == 401)
        #expect(refused.body == #"{"error":"handshake_refused","status":401,"message":"bad \"token\""}"#)
        #expect(throws: TransportError.self) { try WebSocketClient(port: port).connect() }

        let accepted = WebSocketClient(port: port, headers: ["Authorization": "Bearer good"])
        try accepted.connect()
        defer { accepted.close() }
        accepted.send("in")
        #expect(try accepted.receive() == .text("in"))
        #expect(handler.opened.count == 1)
        let stats = onServiceThread(server) { server in server.stats }
        #expect(stats.refusedHandshakes == 2)
        #expect(stats.admittedConnections == 1)
    }

    @Test func aMissingSubprotocolIsAnswered400() throws {
        let (server, handler, port) = try startServer()
        defer { server.stop() }
        let answer = try HTTPConnection(port: port).get("/", headers: "Upgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n")
        #expect(answer.status == 400)
        #expect(handler.opened.isEmpty)
    }

    @Test(arguments: ["chat", "meridian.v2", "chat, meridian.v2"])
    func anOfferOfOtherSubprotocolsIsAnswered400(offer: String) throws {
        let (server, handler, port) = try startServer()
        defer { server.stop() }
        let answer = try upgradeAnswer(port: port, subprotocol: offer)
        #expect(answer.status == 400)
        #expect(answer.body == #"{"error":"handshake_refused","status":400,"message":"subprotocol meridian.v1 required"}"#)
        #expect(try upgradeAnswer(port: port, subprotocol: "chat, meridian.v1").status == 101)
        #expect(onServiceThread(server) { server in server.stats.refusedHandshakes } == 1)
        #expect(handler.wait { opened, _ in opened.count == 1 })
    }

    @Test func originsOutsideTheAllowlistAreRefused403() throws {
        let (server, handler, port) = try startServer { $0.allowedOrigins = ["https://app.example.com"] }
        defer { server.stop() }
        // No Origin (a non-browser client), the same origin (Host: x), and a listed one.
        #expect(try upgradeAnswer(port: port).status == 101)
        #expect(try upgradeAnswer(port: port, headers: "Origin: http://x\r\n").status == 101)
        #expect(try upgradeAnswer(port: port, headers: "Origin: https://APP.example.com\r\n").status == 101)
        let foreign = try upgradeAnswer(port: port, headers: "Origin: https://evil.example\r\n")
        #expect(foreign.status == 403)
        #expect(foreign.body.contains("origin not allowed"))
        // https://x is not the same origin as plain http://x.
        #expect(try upgradeAnswer(port: port, headers: "Origin: https://x\r\n").status == 403)
        #expect(handler.wait { opened, _ in opened.count == 3 })
    }

    @Test func aStarAllowsEveryOrigin() throws {
        let (server, _, port) = try startServer { $0.allowedOrigins = ["*"] }
        defer { server.stop() }
        #expect(try upgradeAnswer(port: port, headers: "Origin: https://anywhere.example\r\n").status == 101)
    }

    @Test func originRules() {
        let allowed = ["https://a.example/"]
        #expect(ServerLoop.originAllowed(nil, host: "h", tls: false, allowed: []))
        #expect(ServerLoop.originAllowed("http://h:8080", host: "H:8080", tls: false, allowed: []))
        #expect(!ServerLoop.originAllowed("http://h:8080", host: "h:8080", tls: true, allowed: []))
        #expect(ServerLoop.originAllowed("https://h:8080", host: "h:8080", tls: true, allowed: []))
        #expect(ServerLoop.originAllowed("https://a.example", host: "h", tls: false, allowed: allowed))
        #expect(!ServerLoop.originAllowed("https://a.example.evil", host: "h", tls: false, allowed: allowed))
        #expect(!ServerLoop.originAllowed("null", host: "h", tls: false, allowed: allowed))
        // Not a browser's: a client library's idea of an origin.
        #expect(ServerLoop.originAllowed("ws://127.0.0.1", host: "127.0.0.1:8080", tls: false, allowed: []))
        #expect(ServerLoop.originAllowed("WSS://elsewhere", host: "h", tls: true, allowed: []))
        #expect(!ServerLoop.originAllowed("wsx://elsewhere", host: "h", tls: true, allowed: []))
    }
}
