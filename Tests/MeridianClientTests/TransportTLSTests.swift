import Foundation
import MeridianClient
import MeridianTesting
import Testing

/// What both transports do with `wss://`: the server's certificate checked against the CA given,
/// a client certificate presented when the server requires one, and settings that cannot work
/// refused before connecting. Runs with the TLS wires only, one test at a time (see ``Wire``):
/// its servers make TLS contexts.
@Suite("TLS on both transports", .serialized, .enabled(if: Wire.secure))
struct TransportTLSTests {
    static let certificates = Result { try TestCertificates() }
    /// A server certificate naming only `localhost`: NIOSSL takes a certificate naming the
    /// address connected to as naming the server.
    static let byNameOnly = Result { try TestCertificates(serverAddress: false) }

    private func mutualTLSServer(_ certificates: Result<TestCertificates, any Error> = certificates) throws -> (TestServer, TestCertificates) {
        let c = try certificates.get()
        let server = try TestServer {
            $0.transport.tlsCertificatePath = c.serverCertificate
            $0.transport.tlsPrivateKeyPath = c.serverKey
            $0.transport.tlsClientCAPath = c.ca
        }
        return (server, c)
    }

    private func join(_ server: TestServer, _ tls: ClientTLS, _ choice: TransportChoice, host: String = "127.0.0.1") throws -> String {
        let client = try MeridianClient(url: "wss://\(host):\(server.port)/", configuration: ClientConfiguration(
            session: "tls", name: "T", connectTimeout: .seconds(3), reconnect: ReconnectPolicy(maxAttempts: 0)), tls: tls, transport: choice)
        defer { client.close() }
        return try client.connect().participant
    }

    @Test(arguments: [TransportChoice.portable, .libwebsockets])
    func aClientWithTheCAAndACertificateJoins(choice: TransportChoice) throws {
        let (server, c) = try mutualTLSServer()
        defer { server.stop() }
        let full = ClientTLS(caFile: c.ca, certificateFile: c.clientCertificate, privateKeyFile: c.clientKey, serverName: "localhost")
        #expect(try join(server, full, choice).hasPrefix("p"))
        // By name, without serverName: the certificate names localhost.
        #expect(try join(server, ClientTLS(caFile: c.ca, certificateFile: c.clientCertificate, privateKeyFile: c.clientKey),
                         choice, host: "localhost").hasPrefix("p"))
    }

    @Test(arguments: [TransportChoice.portable, .libwebsockets])
    func withoutAClientCertificateTheHandshakeFails(choice: TransportChoice) throws {
        let (server, c) = try mutualTLSServer()
        defer { server.stop() }
        #expect(throws: (any Error).self) { try join(server, ClientTLS(caFile: c.ca, serverName: "localhost"), choice) }
    }

    @Test(arguments: [TransportChoice.portable, .libwebsockets])
    func aServerCertificateFromAnotherCAIsRefused(choice: TransportChoice) throws {
        let (server, c) = try mutualTLSServer()
        defer { server.stop() }
        let other = try TestCertificates()
        // The system's roots, then a CA that did not sign the server's certificate.
        let noCA = ClientTLS(certificateFile: c.clientCertificate, privateKeyFile: c.clientKey, serverName: "localhost")
        #expect(throws: (any Error).self) { try join(server, noCA, choice) }
        let wrongCA = ClientTLS(caFile: other.ca, certificateFile: c.clientCertificate, privateKeyFile: c.clientKey, serverName: "localhost")
        #expect(throws: (any Error).self) { try join(server, wrongCA, choice) }
    }

    @Test(arguments: [TransportChoice.portable, .libwebsockets])
    func aServerCertificateForAnotherNameIsRefused(choice: TransportChoice) throws {
        let (server, c) = try mutualTLSServer(Self.byNameOnly)
        defer { server.stop() }
        let named = { (name: String) in ClientTLS(caFile: c.ca, certificateFile: c.clientCertificate, privateKeyFile: c.clientKey, serverName: name) }
        #expect(try join(server, named("localhost"), choice).hasPrefix("p"))
        #expect(throws: (any Error).self) { try join(server, named("meridian.example"), choice) }
    }

    @Test func settingsThatCannotWorkAreRefusedBeforeConnecting() throws {
        let configuration = ClientConfiguration(session: "s", name: "n")
        #expect(throws: ClientError.invalidURL("http://127.0.0.1:1/: expected ws://HOST[:PORT]/PATH or wss://…")) {
            try MeridianClient(url: "http://127.0.0.1:1/", configuration: configuration)
        }
        #expect(throws: ClientError.invalidURL("wss://127.0.0.1:1/: wss:// to an address needs ClientTLS.serverName, the name its certificate carries")) {
            try MeridianClient(url: "wss://127.0.0.1:1/", configuration: configuration)
        }
        #expect(throws: ClientError.invalidURL("a client certificate needs both certificateFile and privateKeyFile")) {
            try MeridianClient(url: "wss://localhost:1/", configuration: configuration, tls: ClientTLS(certificateFile: "/c.pem"))
        }
        #expect(throws: ClientError.self) {
            try MeridianClient(url: "wss://localhost:1/", configuration: configuration, tls: ClientTLS(caFile: "/nonexistent/ca.pem"))
        }
        let endpoint = try ServerEndpoint(url: "wss://example.org/ws?x=1")
        #expect(endpoint == (try ServerEndpoint(url: "wss://example.org:443/ws?x=1")))
        #expect(endpoint.port == 443 && endpoint.path == "/ws?x=1" && endpoint.secure)
        #expect(try ServerEndpoint(url: "ws://[::1]:8080").url == "ws://[::1]:8080/")
    }

    @Test func aConnectionNobodyAnswersFailsWithinItsTimeout() throws {
        // A listening socket that never answers the upgrade.
        let listener = try SilentListener()
        let port = listener.port
        let transport = try NIOClientTransport(url: "ws://127.0.0.1:\(port)/")
        let started = ContinuousClock.now
        #expect(throws: ClientError.timeout("connect to ws://127.0.0.1:\(port)/")) { try transport.connect(timeout: .milliseconds(300)) }
        #expect(ContinuousClock.now - started < .seconds(3))
        transport.close()
    }
}
