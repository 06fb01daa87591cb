import Foundation
import MeridianStorage
import MeridianSync

/// The store a server runs with, opened by ``MeridianServer/start()`` and
/// shared with the hub. With a data directory, changes go through a
/// ``StorageWriter`` (group commit on its own thread); without one, to an
/// in-memory store, committed inline. Reads (loading a session, the HTTP
/// API's reads) always go through a ``StorageReader``, off the service thread.
final class StorageSlot: Sendable {
    struct Opened: Sendable {
        var store: any SessionStore
        /// Nil: commit inline on the service thread.
        var writer: StorageWriter?
        var reader: StorageReader
    }

    private let opened = Locked<Opened?>(nil)
    /// The last storage failure, until a commit or a probe succeeds again (nil: healthy), and
    /// whether a probe thread is on it.
    private let health = Locked<(failure: String?, probing: Bool, closed: Bool)>((nil, false, false))

    var current: Opened? { opened.withLock { $0 } }

    func open(_ configuration: StorageConfiguration, onBatch: @escaping @Sendable (StorageWriter.Batch) -> Void) throws(StorageError) {
        let value: Opened
        if let store = configuration.store {
            value = Opened(store: store, writer: StorageWriter(store: store, maxBatch: configuration.maxBatch, onBatch: onBatch),
                           reader: StorageReader(store: store, threads: configuration.readers))
        } else if let directory = configuration.dataDirectory {
            let store = try SQLiteSessionStore(directory: directory)
            value = Opened(store: store, writer: StorageWriter(store: store, maxBatch: configuration.maxBatch, onBatch: onBatch),
                           reader: StorageReader(store: store, threads: configuration.readers))
        } else {
            let store = InMemorySessionStore()
            value = Opened(store: store, writer: nil, reader: StorageReader(store: store, threads: 1))
        }
        opened.withLock { $0 = value }
    }

    /// Why the store cannot serve now (for /readyz): its last operation failed and it has not
    /// answered since. Nil when healthy.
    var unreadiness: String? { health.withLock { $0.failure.map { "the session store fails: \($0)" } } }

    /// A commit or load ended: a failure makes the server unready until the store answers again,
    /// which a thread asks every half second (no traffic may come to an unready server).
    func note(_ result: Result<Void, StorageError>) {
        switch result {
        case .success:
            health.withLock { $0.failure = nil }
        case .failure(let error) where error.session != nil:
            // One session's change refused (fenced off, or locked by a stalled writer): the store works.
            break
        case .failure(let error):
            let startProbe = health.withLock { health -> Bool in
                health.failure = error.message
                defer { health.probing = true }
                return !health.probing && !health.closed
            }
            // A thread for this outage only: it ends once the store answers or the slot closes.
            if startProbe { WorkerThread<Never>(name: "store-probe").start { turns in self.probeUntilHealthy(turns) } }
        }
    }

    private func probeUntilHealthy(_ turns: WorkerThread<Never>.Turns) {
        // A retry pace: the store is asked again twice a second until it answers.
        while turns.next(until: .now + .milliseconds(500)) != nil {
            guard let store = current?.store, health.withLock({ !$0.closed && $0.failure != nil }) else { break }
            do throws(StorageError) {
                try store.probe()
                health.withLock { $0.failure = nil }
                break
            } catch {
                health.withLock { $0.failure = error.message }
            }
        }
        health.withLock { $0.probing = false }
    }

    /// Stops the readers (reads not started fail), commits what is queued and stops the writer.
    func close() {
        health.withLock { $0.closed = true }
        current?.reader.stop()
        current?.writer?.stop()
    }
}
