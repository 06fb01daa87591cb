import FuzzHarness
import Foundation
import Testing

/// Every kept crash input and every seed, through the harness without instrumentation.
struct ReplayTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func inputs(_ target: String) -> [(name: String, bytes: [UInt8])] {
        ["Regressions", "Corpus"].flatMap { folder in
            Replay.inputs(in: root.appendingPathComponent(folder).appendingPathComponent(target))
                .map { ("\(folder)/\(target)/\($0.name)", $0.bytes) }
        }
    }

    @Test func decoderInputs() throws {
        let inputs = Self.inputs("decoder")
        #expect(inputs.count >= 100, "the golden seeds are missing: run FuzzTesting/Scripts/make-decoder-corpus.py")
        for (name, bytes) in inputs {
            #expect(throws: Never.self, "\(name)") { try DecoderHarness.run(bytes) }
        }
    }

    @Test func httpInputs() throws {
        let inputs = Self.inputs("http")
        #expect(inputs.contains { $0.name == "Regressions/http/01-empty-query-key" }, "the first HTTP regression is missing")
        #expect(inputs.count >= 10)
        for (name, bytes) in inputs {
            #expect(throws: Never.self, "\(name)") { try HTTPHarness.run(bytes) }
        }
    }

    @Test func sessionInputs() throws {
        let inputs = Self.inputs("session")
        #expect(!inputs.isEmpty)
        for (name, bytes) in inputs {
            #expect(throws: Never.self, "\(name)") { try SessionHarness.run(bytes) }
        }
    }
}
