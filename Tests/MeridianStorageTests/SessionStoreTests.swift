import Foundation
import MeridianCore
import MeridianStorage
import Testing

/// The contract of every ``SessionStore``: run against the real SQLite file and the in-memory store.
@Suite struct SessionStoreTests {
    enum Kind: String, CaseIterable { case sqlite, memory }

    /// A store of `kind` and a way to reopen the same data (a new SQLite connection on the same file).
    func withStore(_ kind: Kind, _ body: (_ store: any SessionStore, _ reopen: () throws -> any SessionStore) throws -> Void) throws {
        switch kind {
        case .memory:
            let store = InMemorySessionStore()
            try body(store, { store })
        case .sqlite:
            let dir = temporaryDirectory()
            defer { cleanup(dir) }
            try body(try SQLiteSessionStore(directory: dir), { try SQLiteSessionStore(directory: dir) })
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
        }
    }

    @Test(arguments: Kind.allCases)
    func updatesUpsertAndRemoveAnnotations(kind: Kind) throws {
        try withStore(kind) { store, reopen in
            var record = sampleRecord()
            try store.commit([.update(SessionUpdate(record: record, epoch: "e1"))])
            var pin = record.annotations.first { $0.id == "pin" }!
            pin.title = "Paris (moved)"
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
            #expect(try reopen().list() == [StoredSessionSummary(id: "map-1", seq: 50, annotationCount: 3)])
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
            #expect(try again.list().map(\.id) == ["b"])
        }
    }
}
