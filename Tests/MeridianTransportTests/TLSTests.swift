import Foundation
import MeridianClientTransport
@testable import MeridianTransport
import MeridianTransportCore
import MeridianTesting
import Testing

@Suite(.serialized) struct TLSTests {
    @Test func wssEchoesSmallAndLargeMessages() throws {
        let files = try SelfSignedCertificate()
        let (server, handler, port) = try startServer {
            $0.tlsCertificatePath = files.certificate
            $0.tlsPrivateKeyPath = files.key
            $0.maxMessageBytes = 1 << 20
        }
        defer { server.stop() }
        // Trusting the certificate as a CA, checking it names "localhost".
        let tls = WebSocketClient.TLS(caFilePath: files.certificate, serverName: "localhost")
        let client = WebSocketClient(port: port, tls: tls)
        try client.connect()
        defer { client.close() }
        client.send("hello")
        #expect(try client.receive() == .text("hello"))
        // 200 KB: several client parts in, one pre-framed LWS_WRITE_RAW write out over TLS.
        let big = String(repeating: "0123456789abcdef", count: 12_800)
        client.send(big)
        #expect(try client.receive() == .text(big))
        // Many coalesced frames in one write.
        for i in 0..<200 { client.send("m\(i)") }
        for i in 0..<200 { #expect(try client.receive() == .text("m\(i)")) }
        #expect(handler.opened.count == 1)
    }

    @Test func anUntrustedCertificateIsRefusedUnlessSelfSignedIsAllowed() throws {
        let files = try SelfSignedCertificate()
        let (server, handler, port) = try startServer {
            $0.tlsCertificatePath = files.certificate
            $0.tlsPrivateKeyPath = files.key
        }
        defer { server.stop() }
        #expect(throws: TransportError.self) {
            try WebSocketClient(port: port, tls: .init(serverName: "localhost")).connect()
        }
        let lenient = WebSocketClient(port: port, tls: .init(allowSelfSigned: true, skipHostnameCheck: true))
        try lenient.connect()
        defer { lenient.close() }
        lenient.send("ok")
        #expect(try lenient.receive() == .text("ok"))
        #expect(handler.opened.count == 1)
    }

    @Test func aMissingCertificateFileStopsStartUp() throws {
        var configuration = TransportConfiguration()
        configuration.port = 0
        configuration.tlsCertificatePath = "/nonexistent/cert.pem"
        configuration.tlsPrivateKeyPath = "/nonexistent/key.pem"
        let server = WebSocketServer(configuration: configuration, handler: EchoHandler())
        #expect {
            _ = try server.start()
        } throws: { error in
            "\(error)".contains("cannot read the TLS certificate /nonexistent/cert.pem")
        }
    }

    @Test func aCertificateWithoutAKeyStopsStartUp() throws {
        var configuration = TransportConfiguration()
        configuration.port = 0
        configuration.tlsCertificatePath = "/etc/hostname"
        let server = WebSocketServer(configuration: configuration, handler: EchoHandler())
        #expect(throws: TransportError.invalidConfiguration("TLS needs both a certificate and a private key file")) {
            _ = try server.start()
        }
    }
}

/// A fresh EC certificate for "localhost" and 127.0.0.1, made with the openssl command.
struct SelfSignedCertificate {
    let directory: URL
    var certificate: String { directory.appendingPathComponent("cert.pem").path }
    var key: String { directory.appendingPathComponent("key.pem").path }

    init() throws {
        directory = try TestScratch.directory("tls")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", certificate, "-days", "1", "-subj", "/CN=localhost",
            "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw TransportError.invalidConfiguration("openssl failed") }
    }
}
