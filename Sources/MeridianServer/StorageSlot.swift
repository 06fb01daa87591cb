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

    /// Stops the readers (reads not started fail), commits what is queued and stops the writer.
    func close() {
        current?.reader.stop()
        current?.writer?.stop()
    }
}
