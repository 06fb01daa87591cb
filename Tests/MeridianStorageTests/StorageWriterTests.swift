import Foundation
import MeridianCore
import MeridianStorage
import MeridianSync
import Testing

/// A store that holds its first commit until released, so a test knows what queued behind it.
final class GatedStore: SessionStore {
    let inner: any SessionStore
    let firstCommitStarted = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    private let commits = Locked(0)
    let fail = Locked(false)

    init(_ inner: any SessionStore) { self.inner = inner }

    func load(_ id: String) throws(StorageError) -> StoredSession? { try inner.load(id) }
    func list() throws(StorageError) -> [StoredSessionSummary] { try inner.list() }
    func commit(_ changes: [SessionChange]) throws(StorageError) {
        let n = commits.withLock { $0 += 1; return $0 }
        if n == 1 {
            firstCommitStarted.signal()
            release.wait()
        }
        if fail.withLock({ $0 }) { throw .writeFailed("disk full (test)") }
        try inner.commit(changes)
    }
}

@Suite struct StorageWriterTests {
    func change(_ i: Int) -> SessionChange {
        let a = Annotation(id: "a\(i)", shape: .point(Point(coordinate: coordinate(Double(i % 80), 0))), revision: UInt64(max(i, 1)))
        return .update(SessionUpdate(id: "s", epoch: "e", seq: UInt64(i), settings: SessionSettings(), callout: nil, upserted: [a]))
    }

    @Test func changesQueuedDuringACommitShareTheNextTransaction() throws {
        let dir = temporaryDirectory()
        defer { cleanup(dir) }
        let sqlite = try SQLiteSessionStore(directory: dir)
        let store = GatedStore(sqlite)
        let batches = Locked<[Int]>([])
        let writer = StorageWriter(store: store, maxBatch: 200, onBatch: { b in batches.withLock { $0.append(b.changes) } })
        let done = Locked<[Int]>([])
        writer.submit(change(0)) { r in if (try? r.get()) != nil { done.withLock { $0.append(0) } } }
        store.firstCommitStarted.wait()
        for i in 1...500 {
            writer.submit(change(i)) { r in if (try? r.get()) != nil { done.withLock { $0.append(i) } } }
        }
        store.release.signal()
        writer.stop()
        // 1 held commit, then 500 queued changes in batches of at most 200.
        #expect(batches.withLock { $0 } == [1, 200, 200, 100])
        // Completions come after commit, in submission order.
        #expect(done.withLock { $0 } == Array(0...500))
        let loaded = try #require(try SQLiteSessionStore(directory: dir).load("s"))
        #expect(loaded.record.annotations.count == 501)
        #expect(loaded.record.seq == 500)
    }

    @Test func aFailedCommitFailsEveryChangeInIt() throws {
        let store = GatedStore(InMemorySessionStore())
        store.fail.withLock { $0 = true }
        let writer = StorageWriter(store: store)
        let failures = Locked<[String]>([])
        writer.submit(change(0)) { r in if case .failure(let e) = r { failures.withLock { $0.append(e.message) } } }
        store.firstCommitStarted.wait()
        writer.submit(change(1)) { r in if case .failure(let e) = r { failures.withLock { $0.append(e.message) } } }
        store.release.signal()
        writer.flush()
        #expect(failures.withLock { $0 } == ["storage write failed: disk full (test)", "storage write failed: disk full (test)"])
        #expect(try store.load("s") == nil)
        writer.stop()
        // After stop, changes are refused with a clear error, not dropped silently.
        let late = Locked<StorageError?>(nil)
        writer.submit(change(2)) { r in if case .failure(let e) = r { late.withLock { $0 = e } } }
        #expect(late.withLock { $0 }?.isWriteFailure == true)
    }

    @Test func barriersCompleteInOrderWithoutWriting() throws {
        let store = InMemorySessionStore()
        let writer = StorageWriter(store: store)
        let order = Locked<[String]>([])
        writer.submit(change(1)) { _ in order.withLock { $0.append("change") } }
        writer.submit(nil) { _ in order.withLock { $0.append("barrier") } }
        writer.stop()
        #expect(order.withLock { $0 } == ["change", "barrier"])
        #expect(try store.list().map(\.annotationCount) == [1])
    }

    @Test func aFencedSessionFailsAloneAndTheRestOfItsBatchIsCommitted() throws {
        let memory = InMemorySessionStore()
        try memory.commit([.update(SessionUpdate(id: "lost", epoch: "e", seq: 0, settings: SessionSettings(), callout: nil, fence: 3))])
        let store = GatedStore(memory)
        let batches = Locked<[Int]>([])
        let writer = StorageWriter(store: store, onBatch: { b in batches.withLock { $0.append(b.changes) } })
        let results = Locked<[String]>([])
        func submit(_ label: String, _ change: SessionChange?) {
            writer.submit(change) { r in results.withLock { $0.append("\(label) \((try? r.get()) != nil ? "ok" : "failed")") } }
        }
        func fenced(_ session: String, _ seq: UInt64, _ fence: UInt64) -> SessionChange {
            .update(SessionUpdate(id: session, epoch: "e", seq: seq, settings: SessionSettings(), callout: nil, fence: fence))
        }
        submit("first", change(0))
        store.firstCommitStarted.wait()
        submit("s", change(1))
        submit("lost", fenced("lost", 1, 2))
        submit("other", fenced("other", 1, 2))
        submit("barrier", nil)
        submit("lost again", .delete(id: "lost", fence: 2))
        store.release.signal()
        writer.stop()
        #expect(results.withLock { $0 } == ["first ok", "s ok", "lost failed", "other ok", "barrier ok", "lost again failed"])
        // The held commit, the batch refused for "lost", the batch without it.
        #expect(batches.withLock { $0 } == [1, 4, 2])
        #expect(try memory.list().map(\.id) == ["lost", "other", "s"])
        #expect(try memory.load("lost")?.record.seq == 0)
    }
}
