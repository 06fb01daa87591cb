import Foundation
import MeridianTesting
import Testing

@testable import MeridianLoad

@Suite("meridian load --stagger spreads the draggers' moves over the move interval")
struct StaggerTests {
    @Test func draggersInARowLandAllOverTheInterval() {
        let interval: UInt64 = 16_666
        let delays = (0..<100).map { LoadWorker.staggerDelay(index: $0, interval: interval) }
        #expect(delays.allSatisfy { $0 < interval })
        // Every tenth of the interval holds some of the first 100 draggers' first moves, and no
        // tenth more than a fifth of them.
        let tenths = Dictionary(grouping: delays) { $0 * 10 / interval }.mapValues(\.count)
        #expect(tenths.count == 10)
        #expect(tenths.values.allSatisfy { $0 <= 20 })
        #expect(LoadWorker.staggerDelay(index: 7, interval: interval) == LoadWorker.staggerDelay(index: 7, interval: interval))
    }

    @Test func aStaggeredLoadLosesNothing() throws {
        let server = try TestServer()
        defer { server.stop() }
        let (status, output) = try runLoad([
            "--port", String(server.port), "--clients", "12", "--sessions", "3", "--draggers", "1", "--contention", "0",
            "--rate", "30", "--stagger", "--duration", "2", "--ramp-up", "0.5", "--json", "--quiet",
        ])
        #expect(status == 0)
        let report = try #require(output, "no JSON report")
        func int(_ key: String) -> Int { (report[key] as? NSNumber)?.intValue ?? -1 }
        #expect(int("connected") == 12)
        #expect(int("dragsGranted") >= 3)
        #expect(int("movesSent") > 0)
        #expect(int("lost") == 0)
        #expect(int("outOfOrder") == 0)
    }
}
