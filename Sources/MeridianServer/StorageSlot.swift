import MeridianStorage
import Synchronization

/// The store a server runs with, opened by ``MeridianServer/start()`` and
/// shared with the hub. With a data directory, changes go through a
/// ``StorageWriter`` (group commit on its own thread); without one, to an
/// in-memory store, committed inline.
final class StorageSlot: Sendable {
    struct Opened: Sendable {
        var store: any SessionStore
        /// Nil: commit inline on the service thread.
        var writer: StorageWriter?
    }

    private let opened = Mutex<Opened?>(nil)

    var current: Opened? { opened.withLock { $0 } }

    func open(_ configuration: StorageConfiguration, onBatch: @escaping @Sendable (StorageWriter.Batch) -> Void) throws(StorageError) {
        let value: Opened
        if let store = configuration.store {
            value = Opened(store: store, writer: StorageWriter(store: store, maxBatch: configuration.maxBatch, onBatch: onBatch))
        } else if let directory = configuration.dataDirectory {
            let store = try SQLiteSessionStore(directory: directory)
            value = Opened(store: store, writer: StorageWriter(store: store, maxBatch: configuration.maxBatch, onBatch: onBatch))
        } else {
            value = Opened(store: InMemorySessionStore(), writer: nil)
        }
        opened.withLock { $0 = value }
    }

    /// Commits what is queued and stops the writer.
    func close() {
        current?.writer?.stop()
    }
}

/// The hub, carried through another thread back to the service thread,
/// where alone it is touched.
struct LoopBound<Value>: @unchecked Sendable {
    let value: Value
}
