import Foundation
import MeridianCore
import MeridianPostgres
import MeridianStorage
import MeridianSync
import Testing

/// A store whose first commit waits until released, so a test knows what queues behind it.
final class HeldStore: SessionStore {
    let inner: any SessionStore
    let firstCommitStarted = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    private let commits = Locked(0)

    init(_ inner: any SessionStore) { self.inner = inner }

    func load(_ id: String) throws(StorageError) -> StoredSession? { try inner.load(id) }
    func list() throws(StorageError) -> [StoredSessionSummary] { try inner.list() }
    func commit(_ changes: [SessionChange]) throws(StorageError) {
        if commits.withLock({ $0 += 1; return $0 }) == 1 {
            firstCommitStarted.signal()
            release.wait()
        }
        try inner.commit(changes)
    }
}

@Suite struct PostgresWriterTests {
    @Test func aFencedSessionInABatchFailsAloneAndTheOthersAreCommitted() throws {
        let postgres = try PostgresSessionStore(url: try PostgresFixture.database())
        try postgres.commit([.update(pinUpdate("stale", 0, fence: 3))])
        let store = HeldStore(postgres)
        let batches = Locked<[(changes: Int, failed: Bool)]>([])
        let writer = StorageWriter(store: store, onBatch: { b in batches.withLock { $0.append((b.changes, b.failed)) } })
        let results = Locked<[String]>([])
        func submit(_ label: String, _ change: SessionChange) {
            writer.submit(change) { result in
                results.withLock { $0.append("\(label): " + ((try? result.get()) != nil ? "ok" : "\(result)")) }
            }
        }
        submit("held", .update(pinUpdate("owned", 0, fence: 1)))
        store.firstCommitStarted.wait()
        // Queued behind the held commit: one batch, with the changes of a session this node lost.
        submit("owned 1", .update(pinUpdate("owned", 1, fence: 1)))
        submit("stale 1", .update(pinUpdate("stale", 1, fence: 2)))
        submit("single 1", .update(pinUpdate("single", 1)))
        submit("stale 2", .delete(id: "stale", fence: 2))
        submit("owned 2", .update(pinUpdate("owned", 2, fence: 1)))
        store.release.signal()
        writer.stop()

        let fenced = "failure(storage write fenced off: session stale is stored under fence 3, this change came with fence 2)"
        #expect(results.withLock { $0 } == [
            "held: ok", "owned 1: ok", "stale 1: \(fenced)", "single 1: ok", "stale 2: \(fenced)", "owned 2: ok",
        ])
        // The held commit, the whole batch (refused), the batch without the stale session.
        #expect(batches.withLock { $0.map(\.changes) } == [1, 5, 3])
        #expect(batches.withLock { $0.map(\.failed) } == [false, true, false])
        #expect(try postgres.load("owned")?.record.annotations.map(\.id) == ["a0", "a1", "a2"])
        #expect(try postgres.load("single")?.record.seq == 1)
        #expect(try postgres.load("stale")?.record.annotations.map(\.id) == ["a0"])
    }
}
