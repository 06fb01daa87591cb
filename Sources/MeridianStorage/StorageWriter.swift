import MeridianSync
import Foundation
import MeridianCore

/// Commits changes on its own thread, grouping them: whatever arrived while
/// the previous transaction ran is written in the next one, so many changes
/// share one commit and no change waits longer than one commit behind.
///
/// Each change's completion is called on the writer thread after its
/// transaction committed (or failed); completions run in submission order.
/// A failed transaction fails every change in it, except a refusal for a stale
/// fencing number (``StorageError/fenced(session:stored:offered:)``): that fails
/// the changes of the fenced session only, and the others are committed again
/// without them.
public final class StorageWriter: Sendable {
    /// Told a change's outcome once its transaction committed or failed, on the writer thread.
    public typealias Completion = @Sendable (Result<Void, StorageError>) -> Void

    /// One transaction, for metrics: a batch, or what is left of it once a fenced session's
    /// changes are taken out.
    public struct Batch: Sendable {
        /// How many changes the transaction held.
        public var changes: Int
        /// How long the store took to commit (or fail) the transaction.
        public var duration: Duration
        /// True if the store refused or failed the transaction.
        public var failed: Bool
    }

    private typealias Item = (change: SessionChange?, done: Completion?)

    /// The store the changes are committed to.
    public let store: any SessionStore
    /// Most changes in one transaction.
    public let maxBatch: Int
    private let onBatch: @Sendable (Batch) -> Void
    private let worker: WorkerThread<Item>

    /// Starts the writer thread, which commits to `store` at most `maxBatch` changes per
    /// transaction; `onBatch` hears of every transaction with changes, on that thread.
    public init(store: any SessionStore, maxBatch: Int = 1_024, onBatch: @escaping @Sendable (Batch) -> Void = { _ in }) {
        self.store = store
        self.maxBatch = maxBatch
        self.onBatch = onBatch
        worker = WorkerThread(name: "store-writer", maxBatch: maxBatch)
        // The thread keeps the writer alive until `stop()` ends it.
        worker.start { turns in
            while let turn = turns.next() { self.write(turn.jobs) }
        }
    }

    /// Queues a change (nil: a barrier that only waits for earlier changes).
    public func submit(_ change: SessionChange?, completion: Completion? = nil) {
        if !worker.submit((change, completion)) {
            completion?(.failure(.writeFailed("the server is shutting down")))
        }
    }

    /// Blocks until everything submitted so far is committed.
    public func flush() {
        worker.flush()
    }

    /// Commits what is queued, refuses new changes and ends the thread.
    public func stop() {
        worker.stop()
    }

    /// Commits a batch and completes its changes, in the order they were submitted.
    private func write(_ batch: [Item]) {
        let results = commit(batch.map(\.change))
        for (item, result) in zip(batch, results) { item.done?(result) }
    }

    /// Commits `batch`'s changes in one transaction and returns each item's result (a barrier,
    /// nil, gets the transaction's). When the store refuses a session's change for its fence, or
    /// because another writer holds its lock, the batch is committed again without that
    /// session's changes, which alone fail: neither the stale owner of one session nor a stalled
    /// former owner may fail the writes of the other sessions.
    private func commit(_ batch: [SessionChange?]) -> [Result<Void, StorageError>] {
        var fenced: [String: StorageError] = [:]
        while true {
            let changes = batch.compactMap { change in change.flatMap { fenced[$0.sessionID] == nil ? $0 : nil } }
            let start = ContinuousClock.now
            var failure: StorageError?
            do throws(StorageError) { try store.commit(changes) } catch { failure = error }
            if !changes.isEmpty {
                onBatch(Batch(changes: changes.count, duration: ContinuousClock.now - start, failed: failure != nil))
            }
            // Each round takes out a session of this batch, so the rounds end.
            if let failure, let session = failure.session, changes.contains(where: { $0.sessionID == session }) {
                fenced[session] = failure
                continue
            }
            let rest: Result<Void, StorageError> = failure.map { .failure($0) } ?? .success(())
            return batch.map { change in change.flatMap { fenced[$0.sessionID] }.map { .failure($0) } ?? rest }
        }
    }
}
