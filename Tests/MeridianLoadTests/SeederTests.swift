import Foundation
import MeridianTesting
import Testing

@testable import MeridianLoad

@Suite("Seeding before a run")
struct SeederTests {
    @Test func aServerThatNeverAnswersFailsTheSeedingOnceItHasBeenSilentForTheStallTime() throws {
        let listener = try SilentListener()
        var c = LoadConfiguration()
        c.port = listener.port
        c.sessions = 2
        c.annotations = 3
        c.progress = false
        let start = ContinuousClock.now
        do {
            try Seeder(configuration: c).run(timeout: 120, stall: .milliseconds(300))
            Issue.record("seeding a server that never answers succeeded")
        } catch let error as LoadError {
            #expect(error.description.contains("heard anything"), "\(error)")
        }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(300) && elapsed < .seconds(30), "gave up after \(elapsed)")
    }
}
