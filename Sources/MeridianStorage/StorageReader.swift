import Foundation

/// Reads from a store on a few threads of its own, so that whoever asks
/// (the server's service thread) never waits for the disk. Reads run in
/// the order they were asked for, up to `threads` at once: a
/// ``SQLiteSessionStore`` serves them from concurrent WAL readers.
///
/// Each read's completion is called on the reader thread that ran it.
public final class StorageReader: @unchecked Sendable {
    public let store: any SessionStore
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var queue: [(run: @Sendable (any SessionStore) -> Void, refuse: @Sendable () -> Void)] = []
    private var running = 0
    private var threads = 0
    private var stopping = false

    public init(store: any SessionStore, threads count: Int = 4) {
        self.store = store
        threads = max(1, count)
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
        condition.lock()
        guard !stopping else {
            condition.unlock()
            return completion(.failure(.readFailed("the server is shutting down")))
        }
        queue.append((
            run: { store in
                let result: Result<T, StorageError>
                do throws(StorageError) { result = .success(try body(store)) } catch { result = .failure(error) }
                completion(result)
            },
            refuse: { completion(.failure(.readFailed("the server is shutting down"))) }))
        condition.signal()
        condition.unlock()
    }

    /// Reads waiting or running.
    public var pending: Int { condition.withLock { queue.count + running } }

    /// Fails the reads not started yet, waits for those running, ends the threads.
    public func stop() {
        condition.lock()
        stopping = true
        let refused = queue
        queue.removeAll()
        condition.broadcast()
        condition.unlock()
        for read in refused { read.refuse() }
        condition.lock()
        while threads > 0 { condition.wait() }
        condition.unlock()
    }

    private func run() {
        condition.lock()
        while true {
            while queue.isEmpty && !stopping { condition.wait() }
            if queue.isEmpty {
                threads -= 1
                condition.broadcast()
                condition.unlock()
                return
            }
            let read = queue.removeFirst()
            running += 1
            condition.unlock()
            read.run(store)
            condition.lock()
            running -= 1
        }
    }
}
