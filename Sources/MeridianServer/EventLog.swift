import Logging
import MeridianCore
import MeridianStorage
import MeridianSync

/// The server's event logs: the store (SQLite beside the sessions, or memory)
/// and its writer thread, opened by ``MeridianServer/start()``.
final class EventLog: Sendable {
    private let opened = Locked<EventLogWriter?>(nil)

    var writer: EventLogWriter? { opened.withLock { $0 } }

    func open(_ configuration: EventLogConfiguration, storage: StorageConfiguration, logger: Logger) throws(StorageError) {
        guard configuration.isEnabled else { return }
        let store: any EventLogStore
        if let shared = storage.eventLogStore {
            store = shared
        } else if storage.store == nil, let directory = storage.dataDirectory {
            store = try SQLiteEventLogStore(directory: directory)
        } else {
            store = InMemoryEventLogStore()
        }
        // Age is applied at least twice per maxAge (at most once a minute for long ones).
        let pruneInterval = min(.seconds(60), configuration.retention.maxAge / 2)
        let writer = EventLogWriter(
            store: store, retention: configuration.retention, pruneInterval: pruneInterval,
            onError: { error in logger.error("event log write failed", metadata: ["error": "\(error)"]) },
            onDropped: { count in logger.warning("event log behind: entries dropped", metadata: ["count": "\(count)"]) })
        opened.withLock { $0 = writer }
    }

    /// Writes what is queued and stops the writer.
    func close() {
        writer?.stop()
    }
}

/// One loaded session's side of the log, on the service thread: stamps its
/// events with the wall-clock time, queues them, and decides when a
/// checkpoint follows. Also remembers when the session was last active.
final class SessionLog {
    private let writer: EventLogWriter?
    private let checkpointEvery: Int
    private var checkpointed = false
    private var sinceCheckpoint = 0
    /// When the session last emitted an event (ms since 1970), nil before its first.
    private(set) var lastActivityMs: Int64?

    init(writer: EventLogWriter?, checkpointEvery: Int) {
        self.writer = writer
        self.checkpointEvery = checkpointEvery
    }

    /// Called with every broadcast, after `session` applied `events`. The session is read only
    /// when something is written: most broadcasts are transient moves, and reading a session
    /// kept in a class copies every part of it.
    func record(_ events: [Emitted], of session: @autoclosure () -> Session) {
        guard !events.isEmpty else { return }
        let now = EventLogWriter.nowMs()
        lastActivityMs = now
        guard let writer else { return }
        var discrete = 0
        for e in events where !e.isTransient { discrete += 1 }
        guard discrete > 0 else { return }
        let session = session()
        writer.record(session: session.id, epoch: session.epoch, timeMs: now, events)
        sinceCheckpoint += discrete
        if !checkpointed || sinceCheckpoint >= max(checkpointEvery, session.annotations.count) {
            writer.checkpoint(session, timeMs: now)
            checkpointed = true
            sinceCheckpoint = 0
        }
    }
}
