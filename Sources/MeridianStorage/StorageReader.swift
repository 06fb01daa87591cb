import MeridianSync
import Foundation

/// Reads from a store on a few threads of its own, so that whoever asks
/// (the server's service thread) never waits for the disk. Reads run in
/// the order they were asked for, up to `threads` at once: a
/// ``SQLiteSessionStore`` serves them from concurrent WAL readers.
///
/// Each read's completion is called on the reader thread that ran it.
public final class StorageReader: Sendable {
    private typealias Read = (run: @Sendable (any SessionStore) -> Void, refuse: @Sendable () -> Void)

    /// What the reader threads share with the threads that ask for reads and stop them.
    private struct State {
        var queue: [Read] = []
        var running = 0
        var threads = 0
        var stopping = false
        /// Reader threads that found nothing to do and wait on `wake`: whoever gives them work
        /// takes one off this count and signals once for it.
        var sleeping = 0
        /// Threads in ``stop()``, woken when the last reader thread ends.
        var waiters: [DispatchSemaphore] = []
    }

    public let store: any SessionStore
    private let state = Locked(State())
    private let wake = DispatchSemaphore(value: 0)

    public init(store: any SessionStore, threads count: Int = 4) {
        self.store = store
        let threads = max(1, count)
        state.withLock { $0.threads = threads }
        for n in 0..<threads {
            // Each thread keeps the reader alive until `stop()` ends it.
            let thread = Thread { self.run() }
            thread.name = "meridian-reader-\(n)"
            thread.start()
        }
    }

    /// Runs `body` against the store on a reader thread, then `completion`
    /// with its result on the same thread. After ``stop()`` the completion
    /// is called at once with a failure.
    public func read<T>(
        _ body: @escaping @Sendable (any SessionStore) throws(StorageError) -> T,
        completion: @escaping @Sendable (Result<T, StorageError>) -> Void
    ) {
        let read: Read = (
            run: { store in
                let result: Result<T, StorageError>
                do throws(StorageError) { result = .success(try body(store)) } catch { result = .failure(error) }
                completion(result)
            },
            refuse: { completion(.failure(.readFailed("the server is shutting down"))) })
        // nil: refused; else whether a sleeping reader thread must be woken.
        let queued = state.withLock { state -> Bool? in
            guard !state.stopping else { return nil }
            state.queue.append(read)
            guard state.sleeping > 0 else { return false }
            state.sleeping -= 1
            return true
        }
        guard let wakeReader = queued else {
            return completion(.failure(.readFailed("the server is shutting down")))
        }
        if wakeReader { wake.signal() }
    }

    /// Reads waiting or running.
    public var pending: Int { state.withLock { $0.queue.count + $0.running } }

    /// Fails the reads not started yet, waits for those running, ends the threads.
    public func stop() {
        let ended = DispatchSemaphore(value: 0)
        let (refused, sleeping, over) = state.withLock { state in
            state.stopping = true
            let refused = state.queue
            state.queue.removeAll()
            let sleeping = state.sleeping
            state.sleeping = 0
            let over = state.threads == 0
            if !over { state.waiters.append(ended) }
            return (refused, sleeping, over)
        }
        for _ in 0..<sleeping { wake.signal() }
        for read in refused { read.refuse() }
        if !over { ended.wait() }
    }

    private enum Step {
        case sleep
        case end([DispatchSemaphore])
        case run(Read)
    }

    private func run() {
        var finished = false
        while true {
            let step = state.withLock { state -> Step in
                if finished { state.running -= 1 }
                if !state.queue.isEmpty {
                    state.running += 1
                    return .run(state.queue.removeFirst())
                }
                if state.stopping {
                    state.threads -= 1
                    guard state.threads == 0 else { return .end([]) }
                    defer { state.waiters.removeAll() }
                    return .end(state.waiters)
                }
                state.sleeping += 1
                return .sleep
            }
            finished = false
            switch step {
            case .sleep:
                wake.wait()
            case .end(let waiters):
                for waiter in waiters { waiter.signal() }
                return
            case .run(let read):
                read.run(store)
                finished = true
            }
        }
    }
}
