import MeridianSync
import Foundation
import MeridianCore

/// Commits changes on its own thread, grouping them: whatever arrived while
/// the previous transaction ran is written in the next one, so many changes
/// share one commit and no change waits longer than one commit behind.
///
/// Each change's completion is called on the writer thread after its
/// transaction committed (or failed); completions run in submission order.
public final class StorageWriter: Sendable {
    public typealias Completion = @Sendable (Result<Void, StorageError>) -> Void

    /// One committed batch, for metrics.
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

            let waiters = state.withLock { state in
                state.inFlight = 0
                return state.isIdle ? state.takeWaiters() : []
            }
            for waiter in waiters { waiter.signal() }
        }
    }
}
