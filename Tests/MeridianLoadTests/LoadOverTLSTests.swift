import Foundation
import MeridianTesting
import Testing

/// `meridian load --url wss://…` against a `meridian serve` with TLS that requires client
/// certificates, in processes of their own (a TLS server in this process would make a TLS
/// context while other suites' handshakes are in flight, which libwebsockets 4.1 does not allow).
@Suite("meridian load over TLS", .serialized)
struct LoadOverTLSTests {
    /// Starts `meridian serve` on a free port; returns it with its port.
    private func serve(_ certificates: TestCertificates, data: URL) throws -> (Process, Int) {
        let process = Process()
        process.executableURL = TestServer.executable
        process.arguments = [
            "serve", "--port", "0", "--auth", "none", "--data-dir", data.path, "--tls-cert", certificates.serverCertificate,
            "--tls-key", certificates.serverKey, "--tls-client-ca", certificates.ca,
        ]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            guard !chunk.isEmpty else { break }
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("meridian listening on https://"), let port = text.split(separator: ":").dropFirst(2).first.flatMap({ Int($0.prefix { $0.isNumber }) }) else {
            process.terminate()
            throw ServeFailed(output: text)
        }
        return (process, port)
    }

    private func load(_ arguments: [String]) throws -> (status: Int32, report: [String: Any]?) {
        try runLoad(arguments + ["--json", "--quiet"])
    }

    @Test func aLoadOverWSSWithAClientCertificateDeliversEverything() throws {
        let certificates = try TestCertificates()
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("meridian-load-tls-\(UUID().uuidString)")
        let (server, port) = try serve(certificates, data: data)
        defer {
            server.terminate()
            server.waitUntilExit()
            try? FileManager.default.removeItem(at: data)
        }
        let common = ["--clients", "20", "--draggers", "2", "--annotations", "5", "--duration", "2", "--ramp-up", "0.3",
                      "--settle", "0.3", "--threads", "2", "--ca-file", certificates.ca, "--server-name", "localhost"]
        let (status, report) = try load(["--url", "wss://127.0.0.1:\(port)", "--client-cert", certificates.clientCertificate,
                                         "--client-key", certificates.clientKey] + common)
        #expect(status == 0)
        let r = try #require(report, "no JSON report")
        func int(_ key: String) -> Int { (r[key] as? NSNumber)?.intValue ?? -1 }
        #expect(int("connected") == 20)
        #expect(int("deliveries") > 0)
        #expect(int("lost") == 0)
        #expect(int("outOfOrder") == 0)
        #expect(int("connectFailures") == 0)
        #expect((r["errors"] as? [String: Any])?.isEmpty == true, "errors: \(r["errors"] ?? "none")")

        // Without the client certificate the server refuses every handshake: the seeding fails.
        let (refused, _) = try load(["--url", "wss://127.0.0.1:\(port)"] + common)
        #expect(refused != 0)
        // A wss:// URL with a CA file that is not there is refused before anything connects.
        let (missing, _) = try load(["--url", "wss://127.0.0.1:\(port)", "--ca-file", "/nonexistent/ca.pem"])
        #expect(missing != 0)
    }
}

struct ServeFailed: Error { let output: String }
