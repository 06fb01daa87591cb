import Foundation
import MeridianPostgres
import MeridianStorage
import Testing

/// The event log in PostgreSQL: the contract of ``EventLogStore`` (as SQLite's), and one log
/// for two nodes' stores on one database.
@Suite struct PostgresEventLogTests {
    static func entry(_ session: String, _ seq: UInt64, at time: Int64, kind: EventLogEntry.Kind = .event) -> EventLogEntry {
        EventLogEntry(session: session, epoch: "e1", seq: seq, timeMs: time, kind: kind, body: Array(#"{"type":"ping","seq":\#(seq)}"#.utf8))
    }

    static func log() throws -> (PostgresEventLogStore, String) {
        let url = try PostgresFixture.database()
        return (PostgresEventLogStore(beside: try PostgresSessionStore(url: url)), url)
    }

    @Test func positionsIncreaseInAppendOrderAndPagesFollowThem() throws {
        let (log, _) = try Self.log()
        let written = try log.append((1...5).flatMap { [Self.entry("a", $0, at: 1_000), Self.entry("b", $0, at: 1_000, kind: $0 == 3 ? .checkpoint : .event)] })
        let positions = written.map(\.position)
        #expect(positions == positions.sorted() && Set(positions).count == 10 && positions.allSatisfy { $0 > 0 })
        let first = try log.entries(of: "a", after: 0, limit: 2)
        #expect(first.map(\.seq) == [1, 2])
        let rest = try log.entries(of: "a", after: first.last!.position, limit: 10)
        #expect(rest.map(\.seq) == [3, 4, 5])
        #expect(rest.first?.body == Array(#"{"type":"ping","seq":3}"#.utf8))
        #expect(try log.entries(of: "b", after: 0, limit: 10).map(\.kind) == [.event, .event, .checkpoint, .event, .event])
        #expect(try log.entries(of: "c", after: 0, limit: 10).isEmpty)
    }

    @Test func retentionRemovesByAgeEverywhereAndByCountWhereAsked() throws {
        let (log, _) = try Self.log()
        _ = try log.append((1...8).map { Self.entry("a", $0, at: 10_000 + Int64($0)) } + [Self.entry("old", 1, at: 100)])
        let removed = try log.prune(EventLogRetention(maxAge: .seconds(5), maxEntries: 3), nowMs: 14_000, sessions: ["a"])
        #expect(removed == 6)
        #expect(try log.entries(of: "a", after: 0, limit: 10).map(\.seq) == [6, 7, 8])
        #expect(try log.entries(of: "old", after: 0, limit: 10).isEmpty)
    }

    @Test func twoNodesShareOneLogAndPositionsAreNeverReused() throws {
        let (first, url) = try Self.log()
        let second = PostgresEventLogStore(beside: try PostgresSessionStore(url: url))
        let a = try first.append([Self.entry("s", 1, at: 1), Self.entry("s", 2, at: 1)])
        let b = try second.append([Self.entry("s", 3, at: 1)])
        #expect(b[0].position > a[1].position)
        #expect(try first.entries(of: "s", after: 0, limit: 10).map(\.seq) == [1, 2, 3])
        try second.remove(session: "s")
        #expect(try first.entries(of: "s", after: 0, limit: 10).isEmpty)
        let c = try first.append([Self.entry("s", 1, at: 1)])
        #expect(c[0].position > b[0].position)
    }
}
