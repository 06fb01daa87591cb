import MeridianTransport
import Testing
import MeridianTesting

@Suite struct HTTPBodyTests {
    @Test func methodsAndBodiesReachTheHandler() throws {
        let (server, _, port) = try startServer()
        defer { server.stop() }
        let connection = try HTTPConnection(port: port)
        // A body larger than one read chunk arrives whole.
        let big = [UInt8](repeating: UInt8(ascii: "b"), count: 100_000)
        let posted = try connection.request("POST", "/echo", body: big)
        #expect(posted.status == 200)
        #expect(posted.body == "POST " + String(repeating: "b", count: 100_000))
        // The same keep-alive connection serves the next requests, with and without bodies.
        #expect(try connection.request("PATCH", "/echo", body: Array("{}".utf8)).body == "PATCH {}")
        #expect(try connection.request("PUT", "/echo", body: Array("x".utf8)).body == "PUT x")
        #expect(try connection.request("DELETE", "/echo").body == "DELETE ")
        #expect(try connection.get("/echo").body == "GET ")
    }

    @Test func aBodyOverTheLimitIsAnswered413() throws {
        let (server, _, port) = try startServer { $0.maxHTTPBodyBytes = 1_000 }
        defer { server.stop() }
        let refused = try HTTPConnection(port: port).request("POST", "/echo", body: [UInt8](repeating: 1, count: 1_001))
        #expect(refused.status == 413)
        #expect(refused.body == #"{"error":"body_too_large","message":"the request body exceeds the server's limit"}"#)
        let fits = try HTTPConnection(port: port).request("POST", "/echo", body: [UInt8](repeating: UInt8(ascii: "a"), count: 1_000))
        #expect(fits.status == 200)
    }
}
