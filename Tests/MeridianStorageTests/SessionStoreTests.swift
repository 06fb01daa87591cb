import Foundation
import MeridianCore
import MeridianPostgres
import MeridianStorage
import Testing

/// The contract of every ``SessionStore``: run against the real SQLite file, a real PostgreSQL
/// (PostgresFixture) and the in-memory store.
@Suite struct SessionStoreTests {
    enum Kind: String, CaseIterable { case sqlite, postgres, memory }

    /// A store of `kind` and a way to reopen the same data: a new SQLite connection on the same
    /// file, a new PostgreSQL store (connections of its own) on the same database.
    func withStore(_ kind: Kind, _ body: (_ store: any SessionStore, _ reopen: () throws -> any SessionStore) throws -> Void) throws {
        switch kind {
        case .memory:
            let store = InMemorySessionStore()
            try body(store, { store })
        case .sqlite:
            let dir = temporaryDirectory()
            defer { cleanup(dir) }
            try body(try SQLiteSessionStore(directory: dir), { try SQLiteSessionStore(directory: dir) })
        case .postgres:
            let url = try PostgresFixture.database()
            try body(try PostgresSessionStore(url: url), { try PostgresSessionStore(url: url) })
        }
    }

    @Test(arguments: Kind.allCases)
    func wholeRecordRoundTrips(kind: Kind) throws {
        try withStore(kind) { store, reopen in
            let record = sampleRecord()
            try store.commit([.update(SessionUpdate(record: record, epoch: "e1"))])
            let loaded = try #require(try reopen().load("map-1"))
            #expect(loaded.record == record)
            #expect(loaded.epoch == "e1")
            #expect(try store.load("other") == nil)
            #expect(try reopen().contains("map-1"))
            #expect(try !store.contains("other"))
        }
    }

    @Test(arguments: Kind.allCases)
    func revisionsRoundTripWithEveryChange(kind: Kind) throws {
        try withStore(kind) { store, reopen in
            let record = sampleRecord()
            try store.commit([.update(SessionUpdate(record: record, epoch: "e1"))])
            var pin = record.annotations.first { $0.id == "pin" }!
            pin.revision = 43
            try store.commit([.update(SessionUpdate(id: "map-1", epoch: "e1", seq: 43, settings: record.settings, callout: nil, upserted: [pin]))])
            let loaded = try #require(try reopen().load("map-1"))
            #expect(Dictionary(uniqueKeysWithValues: loaded.record.annotations.map { ($0.id, $0.revision) }) == ["pin": 43, "route": 7, "zone": 30])
        }
    }

    @Test(arguments: Kind.allCases)
    func undoHistoriesAreWrittenAndForgottenOneByOne(kind: Kind) throws {
        try withStore(kind) { store, reopen in
            let record = sampleRecord()
            try store.commit([.update(SessionUpdate(record: record, epoch: "e1"))])
            let cy = UndoHistory(undo: [UndoStep(change: .drag, annotation: "pin", before: record.annotations[0], after: record.annotations[0], at: 43, beforeAt: 42)], lastChange: 43)
            try store.commit([.update(SessionUpdate(
                id: "map-1", epoch: "e1", seq: 43, settings: record.settings, callout: nil,
                histories: ["bo": nil, "cy": cy]))])
            let loaded = try #require(try reopen().load("map-1"))
            #expect(loaded.record.histories == ["ann": record.histories["ann"]!, "cy": cy])
            // A whole record replaces them all.
            var replaced = record
            replaced.histories = ["dee": UndoHistory(lastChange: 1)]
            try store.commit([.update(SessionUpdate(record: replaced, epoch: "e2"))])
            #expect(try reopen().load("map-1")?.record.histories == replaced.histories)
            // A deleted session's histories go with it.
            try store.commit([.delete(id: "map-1")])
            try store.commit([.update(SessionUpdate(id: "map-1", epoch: "e3", seq: 1, settings: record.settings, callout: nil))])
            #expect(try reopen().load("map-1")?.record.histories == [:])
        }
    }

    @Test(arguments: Kind.allCases)
    func updatesUpsertAndRemoveAnnotations(kind: Kind) throws {
        try withStore(kind) { store, reopen in
            var record = sampleRecord()
            try store.commit([.update(SessionUpdate(record: record, epoch: "e1"))])
            var pin = record.annotations.first { $0.id == "pin" }!
            pin.title = "Paris (moved)"
            let before = Int64(Date().timeIntervalSince1970 * 1000)
            let extra = Annotation(id: "extra", shape: .point(Point(coordinate: coordinate(1, 2))), revision: 50)
            try store.commit([.update(SessionUpdate(
                id: "map-1", epoch: "e2", seq: 50, settings: record.settings, callout: nil,
                upserted: [pin, extra], removed: ["route"]))])
            let loaded = try #require(try reopen().load("map-1"))
            record.annotations = (record.annotations.filter { $0.id != "route" && $0.id != "pin" } + [pin, extra])
                .sorted { ($0.zIndex, $0.id) < ($1.zIndex, $1.id) }
            record.callout = nil
            record.seq = 50
            #expect(loaded.record == record)
            #expect(loaded.epoch == "e2")
            let listed = try reopen().list()
            #expect(listed.map { [$0.id, "\($0.seq)", "\($0.annotationCount)"] } == [["map-1", "50", "3"]])
            // The time of the last write: the database's clock, this machine's (to the millisecond,
            // rounded); the in-memory store keeps none.
            let after = Int64(Date().timeIntervalSince1970 * 1000)
            if kind == .memory {
                #expect(listed.first?.writtenMs == nil)
            } else {
                let written = try #require(listed.first?.writtenMs)
                #expect(before - 1 <= written && written <= after + 1, "\(before) <= \(written) <= \(after)")
            }
        }
    }

    @Test(arguments: Kind.allCases)
    func deleteRemovesSessionAndAnnotations(kind: Kind) throws {
        try withStore(kind) { store, reopen in
            try store.commit([
                .update(SessionUpdate(record: sampleRecord(id: "a"), epoch: "e")),
                .update(SessionUpdate(record: sampleRecord(id: "b"), epoch: "e")),
            ])
            try store.commit([.delete(id: "a")])
            let again = try reopen()
            #expect(try again.load("a") == nil)
            #expect(try !again.contains("a") && again.contains("b"))
            #expect(try again.list().map(\.id) == ["b"])
        }
    }

    @Test(arguments: Kind.allCases)
    func changesOfOneCommitApplyInOrderAndTheLastOfAnIdWins(kind: Kind) throws {
        try withStore(kind) { store, reopen in
            let first = Annotation(id: "x", shape: .point(Point(coordinate: coordinate(1, 1))), title: "first", revision: 1)
            var second = first
            second.title = "second"
            try store.commit([
                .update(SessionUpdate(id: "s", epoch: "e", seq: 1, settings: SessionSettings(), callout: nil, upserted: [first, second])),
                .delete(id: "s"),
                .update(SessionUpdate(id: "s", epoch: "e", seq: 2, settings: SessionSettings(), callout: nil, upserted: [second, first])),
            ])
            let loaded = try #require(try reopen().load("s"))
            #expect(loaded.record.annotations == [first])
            #expect(loaded.record.seq == 2)
        }
    }

    @Test(arguments: Kind.allCases)
    func listSortsIdsByTheirBytesWhateverTheCollation(kind: Kind) throws {
        try withStore(kind) { store, _ in
            let ids = ["b", "B", "a-2", "a1", "é", "Z"]
            try store.commit(ids.map { .update(SessionUpdate(id: $0, epoch: "e", seq: 1, settings: SessionSettings(), callout: nil)) })
            #expect(try store.list().map(\.id) == ids.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })
        }
    }

    @Test(arguments: Kind.allCases)
    func aSessionInALargeGroupCommitKeepsEveryAnnotation(kind: Kind) throws {
        try withStore(kind) { store, reopen in
            try store.commit((0..<2_000).map { .update(pinUpdate("big", $0)) })
            let loaded = try #require(try reopen().load("big"))
            #expect(loaded.record.annotations.count == 2_000)
            #expect(loaded.record.seq == 1_999)
        }
    }
}
