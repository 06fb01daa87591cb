import Foundation
import MeridianCore
@testable import MeridianPostgres
import MeridianStorage
import MeridianSync
import Testing

/// A client stalled in the middle of a transaction (a node paused by SIGSTOP, a frozen VM) holds
/// the rows it wrote. PostgreSQL ends such a transaction after the idle timeout, a write that
/// waits for one of its rows fails after the lock timeout naming its session, and the writes of
/// the other sessions in the same batch are committed meanwhile.
@Suite struct PostgresStallTests {
    static let slowdown = ProcessInfo.processInfo.environment["MERIDIAN_TEST_SLOWDOWN"].flatMap { Int($0) } ?? 1

    /// psql holding session `id`'s row in an open transaction, then idle: its input stays open,
    /// as a client that stopped between two statements. `idleTimeout` is the one its own
    /// connection runs with, as the store sets it on every connection of its.
    final class StalledWriter {
        let process: Process
        let input = Pipe()

        init(_ postgres: PostgresFixture, _ url: String, locking id: String, idleTimeout: String) throws {
            let database = String(url.split(separator: "/").last!)
            process = Process()
            process.executableURL = URL(fileURLWithPath: postgres.binaries + "/psql")
            process.arguments = ["-h", "127.0.0.1", "-p", "\(postgres.port)", "-U", "meridian", "-d", database, "-X", "-q", "-v", "ON_ERROR_STOP=1"]
            process.environment = ProcessInfo.processInfo.environment.merging(["PGAPPNAME": "stalled"]) { $1 }
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            input.fileHandleForWriting.write(Data("""
                SET idle_in_transaction_session_timeout = '\(idleTimeout)';
                BEGIN;
                UPDATE sessions SET seq = seq WHERE id = '\(id)';

                """.utf8))
        }

        deinit {
            try? input.fileHandleForWriting.close()
            process.terminate()
            process.waitUntilExit()
        }
    }

    /// Waits until PostgreSQL shows the stalled client idle in its transaction (or `limit` passes).
    static func waitUntilIdleInTransaction(_ postgres: PostgresFixture, limit: Duration = .seconds(20)) throws -> Bool {
        let deadline = ContinuousClock.now + limit
        while ContinuousClock.now < deadline {
            let state = try postgres.psql(
                postgres.url(database: "postgres"), "SELECT state FROM pg_stat_activity WHERE application_name = 'stalled'")
            if state == "idle in transaction" { return true }
            Thread.sleep(forTimeInterval: 0.05)  // polling PostgreSQL's view of the client
        }
        return false
    }

    /// A new database whose sessions "held" and "free" are stored, another client's transaction
    /// idle with the row of "held" locked, and a store that waits 300 ms at most for a row's lock.
    static func stalledOnHeld(_ postgres: PostgresFixture) throws -> (PostgresSessionStore, StalledWriter) {
        let url = try postgres.createDatabase()
        let store = try PostgresSessionStore(url: url, lockTimeout: .milliseconds(300))
        try store.commit([.update(pinUpdate("held", 1)), .update(pinUpdate("free", 1))])
        let stalled = try StalledWriter(postgres, url, locking: "held", idleTimeout: "1h")
        #expect(try waitUntilIdleInTransaction(postgres))
        return (store, stalled)
    }

    @Test func aWriteWaitingForAStalledTransactionsRowFailsAsLockedAndTheStoreStaysUsable() throws {
        let postgres = try PostgresFixture()
        defer { postgres.shutdown() }
        let (store, stalled) = try Self.stalledOnHeld(postgres)

        let start = ContinuousClock.now
        var caught: StorageError?
        do { try store.commit([.update(pinUpdate("held", 2))]) } catch { caught = error }
        #expect(ContinuousClock.now - start < .seconds(10) * Self.slowdown, "the write waited \(ContinuousClock.now - start)")
        #expect(caught?.session == "held", "\(String(describing: caught))")
        #expect(caught?.message.contains("waited too long for another writer's lock") == true, "\(caught?.message ?? "")")
        #expect(caught?.message.contains("55P03") == true, "\(caught?.message ?? "")")
        // Other sessions are written meanwhile, and reads never wait for the lock.
        try store.commit([.update(pinUpdate("free", 2))])
        #expect(try store.load("held")?.record.seq == 1)
        withExtendedLifetime(stalled) {}
    }

    @Test func theWriterCommitsTheOtherSessionsOfABatchWhileOneWaitsForAStalledTransaction() throws {
        let postgres = try PostgresFixture()
        defer { postgres.shutdown() }
        let (store, stalled) = try Self.stalledOnHeld(postgres)

        let writer = StorageWriter(store: store)
        let results = Locked<[String: Result<Void, StorageError>]>([:])
        let done = DispatchSemaphore(value: 0)
        for (id, i) in [("held", 2), ("free", 2), ("other", 1)] {
            writer.submit(.update(pinUpdate(id, i))) { result in
                results.withLock { $0[id] = result }
                done.signal()
            }
        }
        for _ in 0..<3 { #expect(done.wait(timeout: .now() + .seconds(30 * Self.slowdown)) == .success) }
        writer.stop()
        let outcome = results.withLock { $0 }
        #expect(outcome["held"].map { if case .failure(let e) = $0 { e.session == "held" } else { false } } == true, "\(outcome)")
        #expect(outcome["free"].map { if case .success = $0 { true } else { false } } == true, "\(outcome)")
        #expect(outcome["other"].map { if case .success = $0 { true } else { false } } == true, "\(outcome)")
        #expect(try store.load("free")?.record.seq == 2)
        #expect(try store.load("other")?.record.seq == 1)
        withExtendedLifetime(stalled) {}
    }

    @Test func aStoreStalledInItsTransactionLosesItToPostgreSQLAndTheNextOwnerWritesTheRow() throws {
        let postgres = try PostgresFixture()
        defer { postgres.shutdown() }
        let url = try postgres.createDatabase()
        // Two nodes' stores on one database; the former owner stalls between two statements of
        // a commit, holding the session's row, with the store's own connection settings.
        let former = try PostgresSessionStore(url: url, idleTransactionTimeout: .seconds(1))
        let owner = try PostgresSessionStore(url: url, lockTimeout: .seconds(10))
        try former.commit([.update(pinUpdate("held", 1))])
        let resume = DispatchSemaphore(value: 0), holding = DispatchSemaphore(value: 0)
        let outcome = Locked<String?>(nil)
        let stalledThread = Thread {
            do {
                try former.withConnection { c in
                    try c.run("BEGIN")
                    try c.run("UPDATE sessions SET seq = seq WHERE id = 'held'")
                    holding.signal()
                    resume.wait()
                    try c.run("COMMIT")
                }
                outcome.withLock { $0 = "committed" }
            } catch {
                outcome.withLock { $0 = "failed: \(PostgresFailure.reason(error))" }
            }
            holding.signal()
        }
        stalledThread.start()
        #expect(holding.wait(timeout: .now() + .seconds(10)) == .success)

        // The next owner's write waits behind the row until PostgreSQL ends the stalled
        // transaction (after 1 s idle), well within its own lock timeout.
        let start = ContinuousClock.now
        try owner.commit([.update(pinUpdate("held", 2))])
        #expect(ContinuousClock.now - start < .seconds(8) * Self.slowdown, "waited \(ContinuousClock.now - start)")
        #expect(try owner.load("held")?.record.seq == 2)

        // The stalled store wakes: its transaction is gone, and it goes on with a new connection.
        // Its COMMIT fails at once: a statement on a connection PostgreSQL closed was never
        // answered, and the thread waited for it forever.
        resume.signal()
        #expect(holding.wait(timeout: .now() + .seconds(10)) == .success)
        #expect(outcome.withLock { $0 }?.hasPrefix("failed") == true, "\(outcome.withLock { $0 } ?? "nothing")")
        try former.commit([.update(pinUpdate("other", 1))])
        #expect(try owner.load("other")?.record.seq == 1)
    }
}
