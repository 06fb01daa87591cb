import Foundation
import MeridianCore
import MeridianPostgres
import MeridianStorage
import MeridianSync
import Testing

/// The contract of ``EventLogStore``, for SQLite, memory and PostgreSQL alike, and what is
/// particular to each.
@Suite("Event logs: SQLite, memory and PostgreSQL")
struct EventLogStoreTests {
    static func entry(_ session: String, _ seq: UInt64, at time: Int64, kind: EventLogEntry.Kind = .event) -> EventLogEntry {
        EventLogEntry(session: session, epoch: "e1", seq: seq, timeMs: time, kind: kind, body: Array(#"{"type":"ping","seq":\#(seq)}"#.utf8))
    }

    /// Each store, fresh, with the directory to remove after (SQLite's).
    static func stores() throws -> [(any EventLogStore, String?)] {
        let dir = temporaryDirectory()
        let postgres = PostgresEventLogStore(beside: try PostgresSessionStore(url: try PostgresFixture.database()))
        return [(try SQLiteEventLogStore(directory: dir), dir), (InMemoryEventLogStore(), nil), (postgres, nil)]
    }

    @Test func positionsIncreaseInAppendOrderAndPagesFollowThem() throws {
        for (store, dir) in try Self.stores() {
            defer { dir.map(cleanup) }
            let written = try store.append((1...5).flatMap {
                [Self.entry("a", $0, at: 1_000), Self.entry("b", $0, at: 1_000, kind: $0 == 3 ? .checkpoint : .event)]
            })
            let positions = written.map(\.position)
            #expect(positions == positions.sorted() && Set(positions).count == 10 && positions.allSatisfy { $0 > 0 })
            let first = try store.entries(of: "a", after: 0, limit: 2)
            #expect(first.map(\.seq) == [1, 2])
            let rest = try store.entries(of: "a", after: first.last!.position, limit: 10)
            #expect(rest.map(\.seq) == [3, 4, 5])
            #expect(rest.first?.body == Array(#"{"type":"ping","seq":3}"#.utf8))
            #expect(try store.entries(of: "b", after: 0, limit: 10).map(\.kind) == [.event, .event, .checkpoint, .event, .event])
            #expect(try store.entries(of: "c", after: 0, limit: 10).isEmpty)
        }
    }

    @Test func rangesByPositionAndTimeReadOldestOrNewestFirst() throws {
        for (store, dir) in try Self.stores() {
            defer { dir.map(cleanup) }
            // Ten entries of "a" a second apart, between entries of "b".
            let written = try store.append((1...10).flatMap { [Self.entry("a", $0, at: 1_000 * Int64($0)), Self.entry("b", $0, at: 1_000 * Int64($0))] })
            let a = written.filter { $0.session == "a" }.map(\.position)
            let seqs = { (range: EventLogRange, limit: Int) in try store.entries(of: "a", in: range, limit: limit).map(\.seq) }
            #expect(try seqs(EventLogRange(newestFirst: true), 3) == [10, 9, 8])
            #expect(try seqs(EventLogRange(before: a[7], newestFirst: true), 3) == [7, 6, 5])
            #expect(try seqs(EventLogRange(after: a[1], before: a[4], newestFirst: true), 10) == [4, 3])
            #expect(try seqs(EventLogRange(after: a[1], before: a[4]), 10) == [3, 4])
            // From 3 s up to 6 s: seq 3, 4 and 5.
            #expect(try seqs(EventLogRange(since: 3_000, until: 6_000), 10) == [3, 4, 5])
            #expect(try seqs(EventLogRange(since: 3_000, until: 6_000, newestFirst: true), 2) == [5, 4])
            #expect(try seqs(EventLogRange(after: a[3], since: 3_000, until: 6_000), 10) == [5])
            #expect(try seqs(EventLogRange(since: 20_000), 10) == [])
            #expect(try seqs(EventLogRange(before: a[0], newestFirst: true), 10) == [])
            #expect(try seqs(EventLogRange(after: a[5], before: a[2]), 10) == [], "before below after: nothing")
        }
    }

    @Test func retentionRemovesByAgeEverywhereAndByCountWhereAsked() throws {
        for (store, dir) in try Self.stores() {
            defer { dir.map(cleanup) }
            _ = try store.append((1...8).map { Self.entry("a", $0, at: 10_000 + Int64($0)) } + [Self.entry("old", 1, at: 100)])
            let retention = EventLogRetention(maxAge: .seconds(5), maxEntries: 3)
            let removed = try store.prune(retention, nowMs: 14_000, sessions: ["a"])
            #expect(removed == 6)
            #expect(try store.entries(of: "a", after: 0, limit: 10).map(\.seq) == [6, 7, 8])
            #expect(try store.entries(of: "old", after: 0, limit: 10).isEmpty)
        }
    }

    @Test func memoryKeepsABoundedNumberOfEntriesOldestFirstOut() throws {
        let store = InMemoryEventLogStore(maxEntries: 10)
        _ = try store.append((1...6).map { Self.entry("a", $0, at: 1) })
        _ = try store.append((1...6).map { Self.entry("b", $0, at: 1) })
        #expect(try store.entries(of: "a", after: 0, limit: 100).map(\.seq) == [3, 4, 5, 6])
        #expect(try store.entries(of: "b", after: 0, limit: 100).count == 6)
        _ = try store.append((7...12).map { Self.entry("b", $0, at: 1) })
        #expect(try store.entries(of: "a", after: 0, limit: 100).isEmpty)
        #expect(try store.entries(of: "b", after: 0, limit: 100).map(\.seq) == Array(3...12))
    }

    @Test func positionsAreNeverReusedAfterRemovalOrReopening() throws {
        let dir = temporaryDirectory()
        defer { cleanup(dir) }
        let store = try SQLiteEventLogStore(directory: dir)
        let last = try store.append([Self.entry("a", 1, at: 1), Self.entry("a", 2, at: 1)]).last!.position
        try store.remove(session: "a")
        #expect(try store.entries(of: "a", after: 0, limit: 10).isEmpty)
        let reopened = try SQLiteEventLogStore(directory: dir)
        #expect(try reopened.append([Self.entry("a", 1, at: 2)]).first!.position > last)
    }

    @Test func theLogSharesTheSessionStoresFile() throws {
        let dir = temporaryDirectory()
        defer { cleanup(dir) }
        let sessions = try SQLiteSessionStore(directory: dir)
        try sessions.commit([.update(SessionUpdate(record: sampleRecord(), epoch: "e1"))])
        let log = try SQLiteEventLogStore(directory: dir)
        _ = try log.append([Self.entry("map-1", 42, at: 1)])
        #expect(try sessions.load("map-1")?.record == sampleRecord())
        #expect(try log.entries(of: "map-1", after: 0, limit: 1).count == 1)
        #expect(FileManager.default.fileExists(atPath: dir + "/" + SQLiteSessionStore.fileName))
    }

    @Test func theWriterRecordsDiscreteEventsAndCheckpointsAndForgets() throws {
        let store = InMemoryEventLogStore()
        let writer = EventLogWriter(store: store, retention: EventLogRetention())
        defer { writer.stop() }
        let session = Session(id: "s", epoch: "e9", settings: SessionSettings(), limits: SessionLimits())
        let now = EventLogWriter.nowMs()  // entries older than the retention's week would be pruned at once
        writer.record(session: "s", epoch: "e9", timeMs: now, [
            Emitted(event: .annotationRemoved("x"), seq: 1),
            Emitted(event: .location("p1", nil), seq: 1, conflation: .location("p1")),
        ])
        writer.checkpoint(session, timeMs: now + 1)
        writer.flush()
        let log = try store.entries(of: "s", after: 0, limit: 10)
        try #require(log.map(\.kind) == [.event, .checkpoint])
        #expect(String(decoding: log[0].body, as: UTF8.self) == #"{"type":"annotation.removed","seq":1,"id":"x"}"#)
        #expect(log[0].epoch == "e9" && log[0].timeMs == now)
        #expect(String(decoding: log[1].body, as: UTF8.self).contains(#""participants":[]"#))
        writer.forget(session: "s")
        writer.flush()
        #expect(try store.entries(of: "s", after: 0, limit: 10).isEmpty)
    }

    /// A store whose appends wait until it is opened: a disk that has stalled.
    final class StalledStore: EventLogStore, @unchecked Sendable {
        let inner = InMemoryEventLogStore()
        let gate = DispatchSemaphore(value: 0)
        func append(_ entries: [EventLogEntry]) throws(StorageError) -> [EventLogEntry] {
            gate.wait()
            gate.signal()
            return try inner.append(entries)
        }
        func entries(of session: String, in range: EventLogRange, limit: Int) throws(StorageError) -> [EventLogEntry] {
            try inner.entries(of: session, in: range, limit: limit)
        }
        func prune(_ retention: EventLogRetention, nowMs: Int64, sessions: Set<String>) throws(StorageError) -> Int {
            try inner.prune(retention, nowMs: nowMs, sessions: sessions)
        }
        func remove(session: String) throws(StorageError) { try inner.remove(session: session) }
    }

    @Test func aStalledStoreNeverHoldsUpTheCallerAndTheQueueStaysBounded() throws {
        let store = StalledStore()
        let reported = Locked(0)
        let writer = EventLogWriter(store: store, retention: EventLogRetention(), maxPending: 1_000,
                                    onDropped: { n in reported.withLock { $0 += n } })
        let now = EventLogWriter.nowMs()
        // Every record returns while the store is stalled; the oldest queued are dropped beyond the bound.
        for seq in 1...5_000 as ClosedRange<UInt64> {
            writer.record(session: "s", epoch: "e", timeMs: now, [Emitted(event: .annotationRemoved("x\(seq)"), seq: seq)])
        }
        // (The batch the writer took before the store stalled is in flight, not queued.)
        let dropped = writer.dropped
        #expect(dropped >= 3_000)
        store.gate.signal()
        writer.flush()
        writer.stop()
        let kept = try store.entries(of: "s", after: 0, limit: 10_000).map(\.seq)
        #expect(dropped + kept.count == 5_000)
        #expect(reported.withLock { $0 } == dropped)
        #expect(Array(kept.suffix(1_000)) == Array(4_001...5_000))
        #expect(kept == kept.sorted())
    }

    /// A store that is gone (a PostgreSQL out of reach): every call fails; it counts the prunes.
    final class GoneStore: EventLogStore, @unchecked Sendable {
        let prunes = Locked(0)
        func append(_ entries: [EventLogEntry]) throws(StorageError) -> [EventLogEntry] { throw .writeFailed("gone") }
        func entries(of session: String, in range: EventLogRange, limit: Int) throws(StorageError) -> [EventLogEntry] { throw .readFailed("gone") }
        func prune(_ retention: EventLogRetention, nowMs: Int64, sessions: Set<String>) throws(StorageError) -> Int {
            prunes.withLock { $0 += 1 }
            throw .writeFailed("gone")
        }
        func remove(session: String) throws(StorageError) { throw .writeFailed("gone") }
    }

    @Test func aStoreThatFailsIsAskedAgainAfterAPauseNotInABusyLoop() throws {
        let store = GoneStore()
        let failures = Locked<[ContinuousClock.Instant]>([])
        let writer = EventLogWriter(store: store, retention: EventLogRetention(), pruneInterval: .milliseconds(10),
                                    onError: { _ in failures.withLock { $0.append(.now) } })
        // The age prune is due at once and fails; each retry waits for the pause first.
        let start = ContinuousClock.now
        while failures.withLock({ $0.count }) < 3, ContinuousClock.now - start < .seconds(20) {
            Thread.sleep(forTimeInterval: 0.05)  // polling the writer's failures
        }
        writer.stop()
        let times = failures.withLock { $0 }
        #expect(times.count >= 3, "the failed prune was not retried")
        for (a, b) in zip(times, times.dropFirst()).prefix(2) {
            #expect(b - a >= EventLogWriter.retryAfterFailure * 0.9, "retried after \(b - a): a busy loop")
        }
    }
}
