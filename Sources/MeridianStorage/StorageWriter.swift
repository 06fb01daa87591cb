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
    public typealias Completion = @Sendable (Result<Void, StorageError>) -> Void

    /// One transaction, for metrics: a batch, or what is left of it once a fenced session's
    /// changes are taken out.
    public struct Batch: Sendable {
        public var changes: Int
        public var duration: Duration
        public var failed: Bool
    }

    /// What the writer thread shares with the threads that submit, flush and stop.
    private struct State: Awaitable {
        var queue: [(change: SessionChange?, done: Completion?)] = []
        var inFlight = 0
        var stopping = false
        var ended = false
        /// The writer thread found nothing to do and waits on `wake`: the next to give it work
        /// clears this and signals, once.
        var sleeping = false
        /// Threads in ``flush()`` or ``stop()``, woken whenever the writer goes idle or ends
        /// (each then looks again at what it waits for).
        var waiters: [DispatchSemaphore] = []

        var isIdle: Bool { queue.isEmpty && inFlight == 0 }

        /// Clears `sleeping`; true if it was set, when the caller must signal `wake`.
        mutating func takeSleeping() -> Bool {
            defer { sleeping = false }
            return sleeping
        }

        mutating func takeWaiters() -> [DispatchSemaphore] {
            defer { waiters.removeAll() }
            return waiters
        }
    }

    public let store: any SessionStore
    /// Most changes in one transaction.
    public let maxBatch: Int
    private let onBatch: @Sendable (Batch) -> Void
    private let state = Locked(State())
    private let wake = DispatchSemaphore(value: 0)

    public init(store: any SessionStore, maxBatch: Int = 1_024, onBatch: @escaping @Sendable (Batch) -> Void = { _ in }) {
        self.store = store
        self.maxBatch = maxBatch
        self.onBatch = onBatch
        // The thread keeps the writer alive until `stop()` ends it.
        let thread = Thread { self.run() }
        thread.name = "meridian-storage"
        thread.start()
    }

    /// Queues a change (nil: a barrier that only waits for earlier changes).
    public func submit(_ change: SessionChange?, completion: Completion? = nil) {
        // nil: refused; else whether the writer thread sleeps and must be woken.
        let queued = state.withLock { state -> Bool? in
            guard !state.stopping else { return nil }
            state.queue.append((change, completion))
            return state.takeSleeping()
        }
        guard let wakeWriter = queued else {
            completion?(.failure(.writeFailed("the server is shutting down")))
            return
        }
        if wakeWriter { wake.signal() }
    }

    /// Blocks until everything submitted so far is committed.
    public func flush() {
        state.wait { $0.isIdle }
    }

    /// Commits what is queued, refuses new changes and ends the thread.
    public func stop() {
        let sleeping = state.withLock { state in
            state.stopping = true
            return state.takeSleeping()
        }
        if sleeping { wake.signal() }
        state.wait { $0.ended }
    }

    private enum Step {
        case sleep
        case end([DispatchSemaphore])
        case commit([(change: SessionChange?, done: Completion?)])
    }

    private func run() {
        while true {
            let step = state.withLock { state -> Step in
                if state.queue.isEmpty {
                    if state.stopping {
                        state.ended = true
                        return .end(state.takeWaiters())
                    }
                    state.sleeping = true
                    return .sleep
                }
                let batch = Array(state.queue.prefix(maxBatch))
                state.queue.removeFirst(batch.count)
                state.inFlight = batch.count
                return .commit(batch)
            }
            let batch: [(change: SessionChange?, done: Completion?)]
            switch step {
            case .sleep:
                wake.wait()
                continue
            case .end(let waiters):
                for waiter in waiters { waiter.signal() }
                return
            case .commit(let items):
                batch = items
            }

            let results = commit(batch.map(\.change))
            for (item, result) in zip(batch, results) { item.done?(result) }

            let waiters = state.withLock { state in
                state.inFlight = 0
                return state.isIdle ? state.takeWaiters() : []
            }
            for waiter in waiters { waiter.signal() }
        }
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
