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

    /// The store the reads run against.
    public let store: any SessionStore
    private let worker: WorkerThread<Read>

    /// Starts `count` reader threads (default 4) on `store`; they run until ``stop()``.
    public init(store: any SessionStore, threads count: Int = 4) {
        self.store = store
        worker = WorkerThread(name: "store-reader", threads: count, maxBatch: 1)
        // The threads keep the reader alive until `stop()` ends them.
        worker.start { turns in
            while let turn = turns.next() { for read in turn.jobs { read.run(self.store) } }
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
        if !worker.submit(read) { read.refuse() }
    }

    /// Reads waiting or running.
    public var pending: Int { worker.pending }

    /// Fails the reads not started yet, waits for those running, ends the threads.
    public func stop() {
        worker.stop { refused in
            for read in refused { read.refuse() }
        }
    }
}
