import Foundation
import MeridianCore
import MeridianTesting
import MeridianTransport
import Testing

@Suite("The meridian executable")
struct ShutdownTests {
    @Test func sigtermClosesConnectionsWith1001AndExitsZero() throws {
        let process = Process()
        process.executableURL = TestServer.executable
        process.arguments = ["serve", "--port", "0", "--auth", "none", "--log-level", "error"]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        defer { if process.isRunning { process.terminate() } }

        var line = Data()
        while !line.contains(UInt8(ascii: "\n")) {
            let chunk = out.fileHandleForReading.availableData
            try #require(!chunk.isEmpty, "server exited before printing its port")
            line.append(chunk)
        }
        let text = String(decoding: line, as: UTF8.self)
        let port = try #require(text.split(separator: ":").last.flatMap { Int($0.prefix { $0.isNumber }) }, "no port in \(text)")

        let client = try TestClient(port: port)
        try client.join("s", name: "Alice", role: "owner")
        kill(process.processIdentifier, SIGTERM)
        let closed = try client.waitFor(timeout: .seconds(10)) { $0["type"]?.string == "$closed" }
        #expect(closed["code"]?.number == 1001)
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        #expect(process.terminationReason == .exit)
    }
}
