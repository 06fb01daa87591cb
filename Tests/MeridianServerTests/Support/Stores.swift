import Foundation
import MeridianStorage

/// Something that happens once, waited for with a timeout.
final class Event: @unchecked Sendable {
    private let condition = NSCondition()
    private var fired = false

    func fire() {
        condition.withLock {
            fired = true
            condition.broadcast()
        }
    }

    var happened: Bool { condition.withLock { fired } }

    /// Whether it happened within `timeout` seconds.
    func wait(timeout: TimeInterval = 10) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        return condition.withLock {
            while !fired {
                if !condition.wait(until: deadline) { return fired }
            }
            return true
        }
    }
}

/// The real SQLite store, whose `load` of one session takes `delay` longer: a slow disk or a
/// very large session. Loading it can also be made to fail.
final class SlowLoadStore: SessionStore, @unchecked Sendable {
    let sqlite: SQLiteSessionStore
    let slowID: String
    let delay: TimeInterval
    let failing: Bool
    /// Fired when the slow load starts, and when it returns.
    let loadStarted = Event()
    let loadEnded = Event()
    private let lock = NSLock()
    private var slowLoads = 0

    init(directory: String, slowID: String, delay: TimeInterval, failing: Bool = false) throws {
        sqlite = try SQLiteSessionStore(directory: directory)
        self.slowID = slowID
        self.delay = delay
        self.failing = failing
    }

    /// Loads of the slow session so far.
    var loads: Int { lock.withLock { slowLoads } }

    func load(_ id: String) throws(StorageError) -> StoredSession? {
        guard id == slowID else { return try sqlite.load(id) }
        lock.withLock { slowLoads += 1 }
        loadStarted.fire()
        defer { loadEnded.fire() }
        Thread.sleep(forTimeInterval: delay)
        if failing { throw .readFailed("disk I/O error (test)") }
        return try sqlite.load(id)
    }

    func list() throws(StorageError) -> [StoredSessionSummary] { try sqlite.list() }
    func commit(_ changes: [SessionChange]) throws(StorageError) { try sqlite.commit(changes) }
}

/// The real SQLite store, whose commits can be held: while held, a commit waits until
/// `release()` (as on a disk that takes its time to sync).
final class HeldCommitStore: SessionStore, @unchecked Sendable {
    let sqlite: SQLiteSessionStore
    private let condition = NSCondition()
    private var holding = false
    private var waitingCommits = 0
    /// When the last commit returned.
    private var lastCommit: ContinuousClock.Instant?

    init(directory: String) throws {
        sqlite = try SQLiteSessionStore(directory: directory)
    }

    func hold() { condition.withLock { holding = true } }

    func release() {
        condition.withLock {
            holding = false
            condition.broadcast()
        }
    }

    /// Waits until a commit is held; false if none is within `timeout` seconds.
    func waitForHeldCommit(timeout: TimeInterval = 10) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        return condition.withLock {
            while waitingCommits == 0 {
                if !condition.wait(until: deadline) { return waitingCommits > 0 }
            }
            return true
        }
    }

    var committedAt: ContinuousClock.Instant? { condition.withLock { lastCommit } }

    func load(_ id: String) throws(StorageError) -> StoredSession? { try sqlite.load(id) }
    func list() throws(StorageError) -> [StoredSessionSummary] { try sqlite.list() }

    func commit(_ changes: [SessionChange]) throws(StorageError) {
        condition.withLock {
            waitingCommits += 1
            condition.broadcast()
            while holding { condition.wait() }
            waitingCommits -= 1
        }
        try sqlite.commit(changes)
        condition.withLock { lastCommit = .now }
    }
}

func temporaryDirectory() -> String {
    FileManager.default.temporaryDirectory.appendingPathComponent("meridian-offthread-\(UUID().uuidString)").path
}

/// The in-memory store, whose loads of one session wait until the test lets them go on (after
/// ``loadStarted`` fired): what happens while a load is in flight, decided by the test.
final class GatedLoadStore: SessionStore, @unchecked Sendable {
    let memory = InMemorySessionStore()
    let gatedID: String
    let loadStarted = Event()
    private let gate = Event()

    init(gating id: String) { gatedID = id }

    /// Lets the gated loads (this one and every later one) go on.
    func open() { gate.fire() }

    func load(_ id: String) throws(StorageError) -> StoredSession? { try memory.load(id) }

    func load(_ id: String, claiming fence: UInt64) throws(StorageError) -> StoredSession? {
        if id == gatedID {
            loadStarted.fire()
            guard gate.wait(timeout: 30) else { throw .readFailed("the test never opened the gate") }
        }
        return try memory.load(id, claiming: fence)
    }

    func list() throws(StorageError) -> [StoredSessionSummary] { try memory.list() }
    func commit(_ changes: [SessionChange]) throws(StorageError) { try memory.commit(changes) }
}

/// The in-memory store, whose claims of a session (a node loading it to serve it) fail while the
/// test says so, and count as they do.
final class ClaimFailingStore: SessionStore, @unchecked Sendable {
    let memory = InMemorySessionStore()
    private let lock = NSLock()
    private var failing = false
    private var failures = 0

    func failClaims(_ fail: Bool) { lock.withLock { failing = fail } }

    /// Claims refused so far.
    var failedClaims: Int { lock.withLock { failures } }

    func load(_ id: String) throws(StorageError) -> StoredSession? { try memory.load(id) }

    func load(_ id: String, claiming fence: UInt64) throws(StorageError) -> StoredSession? {
        let refused = lock.withLock {
            if failing { failures += 1 }
            return failing
        }
        if refused { throw .readFailed("the store refuses claims") }
        return try memory.load(id, claiming: fence)
    }

    func list() throws(StorageError) -> [StoredSessionSummary] { try memory.list() }
    func commit(_ changes: [SessionChange]) throws(StorageError) { try memory.commit(changes) }
}

/// The in-memory event log, whose page reads and whole-log removals can be held until the test
/// lets them go on: a log in a database that is slow, or stalled.
final class HeldLogStore: EventLogStore, @unchecked Sendable {
    let memory = InMemoryEventLogStore()
    /// Fired when entries were first appended.
    let appended = Event()
    /// Fired when a held read, or a held removal, has started.
    let readHeld = Event()
    let removeHeld = Event()
    private let condition = NSCondition()
    private var holdingReads = false
    private var holdingRemoves = false

    func holdReads() { condition.withLock { holdingReads = true } }
    func holdRemoves() { condition.withLock { holdingRemoves = true } }

    /// Lets every held read and removal go on, and the later ones pass.
    func release() {
        condition.withLock {
            holdingReads = false
            holdingRemoves = false
            condition.broadcast()
        }
    }

    private func wait(_ held: Event, while holding: () -> Bool) {
        condition.withLock {
            guard holding() else { return }
            held.fire()
            while holding() { condition.wait() }
        }
    }

    func append(_ entries: [EventLogEntry]) throws(StorageError) -> [EventLogEntry] {
        defer { if !entries.isEmpty { appended.fire() } }
        return try memory.append(entries)
    }

    func entries(of session: String, in range: EventLogRange, limit: Int) throws(StorageError) -> [EventLogEntry] {
        wait(readHeld) { holdingReads }
        return try memory.entries(of: session, in: range, limit: limit)
    }

    func prune(_ retention: EventLogRetention, nowMs: Int64, sessions: Set<String>) throws(StorageError) -> Int {
        try memory.prune(retention, nowMs: nowMs, sessions: sessions)
    }

    func remove(session: String) throws(StorageError) {
        wait(removeHeld) { holdingRemoves }
        try memory.remove(session: session)
    }
}
