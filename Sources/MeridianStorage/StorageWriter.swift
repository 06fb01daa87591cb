import Foundation
import MeridianCore

/// Commits changes on its own thread, grouping them: whatever arrived while
/// the previous transaction ran is written in the next one, so many changes
/// share one commit and no change waits longer than one commit behind.
///
/// Each change's completion is called on the writer thread after its
/// transaction committed (or failed); completions run in submission order.
public final class StorageWriter: @unchecked Sendable {
    public typealias Completion = @Sendable (Result<Void, StorageError>) -> Void

    /// One committed batch, for metrics.
    public struct Batch: Sendable {
        public var changes: Int
        public var duration: Duration
        public var failed: Bool
    }

    public let store: any SessionStore
    /// Most changes in one transaction.
    public let maxBatch: Int
    private let onBatch: @Sendable (Batch) -> Void
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var queue: [(change: SessionChange?, done: Completion?)] = []
    private var inFlight = 0
    private var stopping = false
    private var thread: Thread?

    public init(store: any SessionStore, maxBatch: Int = 1_024, onBatch: @escaping @Sendable (Batch) -> Void = { _ in }) {
        self.store = store
        self.maxBatch = maxBatch
        self.onBatch = onBatch
        // The thread keeps the writer alive until `stop()` ends it.
        let thread = Thread { self.run() }
        thread.name = "meridian-storage"
        self.thread = thread
        thread.start()
    }

    /// Queues a change (nil: a barrier that only waits for earlier changes).
    public func submit(_ change: SessionChange?, completion: Completion? = nil) {
        condition.lock()
        defer { condition.unlock() }
        guard !stopping else {
            completion?(.failure(.writeFailed("the server is shutting down")))
            return
        }
        queue.append((change, completion))
        condition.broadcast()
    }

    /// Blocks until everything submitted so far is committed.
    public func flush() {
        condition.lock()
        defer { condition.unlock() }
        while !queue.isEmpty || inFlight > 0 { condition.wait() }
    }

    /// Commits what is queued, refuses new changes and ends the thread.
    public func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        while !queue.isEmpty || inFlight > 0 || thread != nil { condition.wait() }
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while queue.isEmpty && !stopping { condition.wait() }
            if queue.isEmpty && stopping {
                thread = nil
                condition.broadcast()
                condition.unlock()
                return
            }
            let batch = Array(queue.prefix(maxBatch))
            queue.removeFirst(batch.count)
            inFlight = batch.count
            condition.unlock()

            let changes = batch.compactMap(\.change)
            let start = ContinuousClock.now
            let result: Result<Void, StorageError>
            do throws(StorageError) {
                try store.commit(changes)
                result = .success(())
            } catch {
                result = .failure(error)
            }
            if !changes.isEmpty {
                onBatch(Batch(changes: changes.count, duration: ContinuousClock.now - start, failed: (try? result.get()) == nil))
            }
            for item in batch { item.done?(result) }

            condition.lock()
            inFlight = 0
            condition.broadcast()
            condition.unlock()
        }
    }
}
