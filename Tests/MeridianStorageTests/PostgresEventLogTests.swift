import Foundation
import MeridianPostgres
import MeridianStorage
import Testing

/// The event log in PostgreSQL: one log for two nodes' stores on one database (the contract
/// of ``EventLogStore`` is in EventLogStoreTests).
@Suite struct PostgresEventLogTests {
    static func log() throws -> (PostgresEventLogStore, String) {
        let url = try PostgresFixture.database()
        return (PostgresEventLogStore(beside: try PostgresSessionStore(url: url)), url)
    }

    @Test func twoNodesShareOneLogAndPositionsAreNeverReused() throws {
        let (first, url) = try Self.log()
        let second = PostgresEventLogStore(beside: try PostgresSessionStore(url: url))
        let a = try first.append([EventLogStoreTests.entry("s", 1, at: 1), EventLogStoreTests.entry("s", 2, at: 1)])
        let b = try second.append([EventLogStoreTests.entry("s", 3, at: 1)])
        #expect(b[0].position > a[1].position)
        #expect(try first.entries(of: "s", after: 0, limit: 10).map(\.seq) == [1, 2, 3])
        try second.remove(session: "s")
        #expect(try first.entries(of: "s", after: 0, limit: 10).isEmpty)
        let c = try first.append([EventLogStoreTests.entry("s", 1, at: 1)])
        #expect(c[0].position > b[0].position)
    }
}
