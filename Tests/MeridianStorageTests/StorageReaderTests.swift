import Foundation
import MeridianCore
import MeridianStorage
import Testing

@Suite struct StorageReaderTests {
    @Test func aReadRunsOnAReaderThreadAndAnswersWithWhatIsStored() throws {
        let dir = temporaryDirectory()
        defer { cleanup(dir) }
        let store = try SQLiteSessionStore(directory: dir)
        try store.commit([.update(SessionUpdate(record: sampleRecord(id: "map-1"), epoch: "e1"))])
        let reader = StorageReader(store: store, threads: 2)
        defer { reader.stop() }
        let answered = Answer<(StoredSession?, Bool)>()
        let caller = pthread_self()
        reader.read({ store throws(StorageError) in try store.load("map-1") }, completion: { result in
            answered.set(((try? result.get()) ?? nil, pthread_equal(pthread_self(), caller) == 0))
        })
        let (stored, elsewhere) = try #require(answered.get())
        #expect(stored == StoredSession(record: sampleRecord(id: "map-1"), epoch: "e1"))
        #expect(elsewhere)
    }

    @Test func readsRunAtTheSameTimeUpToTheThreadCount() throws {
        let dir = temporaryDirectory()
        defer { cleanup(dir) }
        let reader = StorageReader(store: try SQLiteSessionStore(directory: dir), threads: 2)
        defer { reader.stop() }
        // Each read waits for the other to start: they finish only if both run at once.
        let first = DispatchSemaphore(value: 0), second = DispatchSemaphore(value: 0)
        let done = Answer<Int>()
        reader.read({ store throws(StorageError) in
            first.signal()
            guard second.wait(timeout: .now() + 5) == .success else { throw .readFailed("ran alone") }
            return try store.list().count
        }, completion: { done.add(((try? $0.get()) != nil) ? 1 : 0) })
        reader.read({ store throws(StorageError) in
            second.signal()
            guard first.wait(timeout: .now() + 5) == .success else { throw .readFailed("ran alone") }
            return try store.list().count
        }, completion: { done.add(((try? $0.get()) != nil) ? 1 : 0) })
        #expect(done.waitForTotal(2))
    }

    @Test func stopFailsReadsNotStartedAndWaitsForTheRunningOne() throws {
        let dir = temporaryDirectory()
        defer { cleanup(dir) }
        let reader = StorageReader(store: try SQLiteSessionStore(directory: dir), threads: 1)
        let running = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0)
        let firstResult = Answer<Bool>(), secondResult = Answer<String>()
        reader.read({ _ throws(StorageError) in
            running.signal()
            release.wait()
            return 1
        }, completion: { firstResult.set((try? $0.get()) == 1) })
        #expect(running.wait(timeout: .now() + 5) == .success)
        reader.read({ _ throws(StorageError) in 2 }, completion: { result in
            if case .failure(let error) = result { secondResult.set(error.message) } else { secondResult.set("succeeded") }
        })
        let stopped = Answer<Bool>()
        Thread { reader.stop(); stopped.set(true) }.start()
        #expect(secondResult.get()?.contains("shutting down") == true)
        release.signal()
        #expect(stopped.get() == true)
        #expect(firstResult.get() == true)
        // After stop, a read fails at once.
        let late = Answer<Bool>()
        reader.read({ _ throws(StorageError) in 3 }, completion: { late.set((try? $0.get()) == nil) })
        #expect(late.get() == true)
    }
}

/// A value set on another thread, waited for with a timeout.
final class Answer<T>: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: T?
    private var total = 0

    func set(_ newValue: T) {
        condition.withLock {
            value = newValue
            condition.broadcast()
        }
    }

    func add(_ n: Int) {
        condition.withLock {
            total += n
            condition.broadcast()
        }
    }

    /// The value, or nil if none was set within `timeout` seconds.
    func get(timeout: TimeInterval = 5) -> T? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        return condition.withLock {
            while value == nil { if !condition.wait(until: deadline) { break } }
            return value
        }
    }

    func waitForTotal(_ n: Int, timeout: TimeInterval = 10) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        return condition.withLock {
            while total < n { if !condition.wait(until: deadline) { break } }
            return total >= n
        }
    }
}
