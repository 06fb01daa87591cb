import Foundation
import MeridianAuth
import MeridianServer
import MeridianTesting
import Testing

@Suite("meridian load against a real server")
struct LoadCommandTests {
    @Test func smallLoadReportsNoLossAndFailsAnImpossibleP99() throws {
        let server = try TestServer()
        let port = server.port
        defer { server.stop() }

        let (status, output) = try runLoad([
            "--port", String(port), "--clients", "20", "--draggers", "2", "--contention", "1",
            "--selectors", "2", "--camera-movers", "2", "--duration", "3", "--ramp-up", "0.5",
            "--json", "--quiet", "--max-p99", "0.000001",
        ])

        #expect(status != 0, "an impossible --max-p99 must fail the run")
        let report = try #require(output, "no JSON report")
        func int(_ key: String) -> Int { (report[key] as? NSNumber)?.intValue ?? -1 }
        #expect(int("connected") == 20)
        #expect(int("deliveries") > 0)
        #expect(int("lost") == 0)
        #expect(int("outOfOrder") == 0)
        #expect(int("duplicates") == 0)
        #expect(int("connectFailures") == 0)
        #expect(int("dragsGranted") > 0)
        // Both draggers compete for one annotation: the second starting is refused.
        #expect(int("dragsRefused") > 0)
        #expect((report["errors"] as? [String: Any])?.isEmpty == true, "errors: \(report["errors"] ?? "none")")
        let latency = try #require(report["latencyMs"] as? [String: Any])
        #expect(((latency["count"] as? NSNumber)?.intValue ?? 0) > 0)
        #expect(((latency["p99"] as? NSNumber)?.doubleValue ?? 0) > 0.000001)
        let join = try #require(report["joinMs"] as? [String: Any])
        #expect((join["count"] as? NSNumber)?.intValue == 20)
    }
}

@Suite("meridian load against a server that checks tokens")
struct LoadWithTokensTests {
    @Test func eachClientJoinsWithItsOwnToken() async throws {
        let secret = "load-test-secret-0123456789abcdef-xyz"
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("meridian-load-secret-\(UUID().uuidString)")
        try secret.write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let verifier = try await TokenVerifier.make(keys: [.secret(secret)])
        let server = try TestServer { $0.authentication = .tokens(verifier) }
        defer { server.stop() }

        let (status, output) = try runLoad([
            "--port", String(server.port), "--clients", "10", "--draggers", "1", "--annotations", "5",
            "--duration", "1", "--ramp-up", "0.2", "--settle", "0.2", "--json", "--quiet", "--jwt-secret-file", file.path,
        ])
        #expect(status == 0)
        let report = try #require(output, "no JSON report")
        #expect((report["connected"] as? NSNumber)?.intValue == 10)
        #expect(((report["deliveries"] as? NSNumber)?.intValue ?? 0) > 0)
        #expect((report["errors"] as? [String: Any])?.isEmpty == true, "errors: \(report["errors"] ?? "none")")
        #expect(((report["joinMs"] as? [String: Any])?["count"] as? NSNumber)?.intValue == 10, "every client joined")
    }
}
