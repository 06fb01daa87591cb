import Foundation
import MeridianCore
import MeridianPostgres
import MeridianStorage
import Testing

/// PostgreSQL unreachable, restarted or silent: every call fails within a bound with a reason
/// naming the database (never its password), and succeeds again once PostgreSQL is back.
/// Each test has a server of its own, which it stops.
@Suite struct PostgresFaultTests {
    /// How long a call may take to fail: the connect timeout the stores are opened with, and
    /// slack (more under ThreadSanitizer: `MERIDIAN_TEST_SLOWDOWN`).
    static let connectTimeout: Duration = .seconds(2)
    static let slowdown = ProcessInfo.processInfo.environment["MERIDIAN_TEST_SLOWDOWN"].flatMap { Int($0) } ?? 1
    static let failureBound: Duration = .seconds(8) * slowdown

    func failure(within bound: Duration = failureBound, _ body: () throws -> Void) -> StorageError? {
        let start = ContinuousClock.now
        var caught: StorageError?
        do { try body() } catch { caught = error as? StorageError }
        let took = ContinuousClock.now - start
        #expect(took < bound, "failed after \(took)")
        #expect(caught != nil, "succeeded or threw another error than a StorageError")
        return caught
    }

    @Test func aStoppedServerFailsCallsClearlyAndARestartedOneServesThemAgain() throws {
        let postgres = try PostgresFixture()
        defer { postgres.shutdown() }
        let url = try postgres.createDatabase().replacingOccurrences(of: "meridian@", with: "meridian:s3cret@")
        let store = try PostgresSessionStore(url: url, connectTimeout: Self.connectTimeout)
        let shown = "postgres://meridian@127.0.0.1:\(postgres.port)/"
        #expect(store.url.hasPrefix(shown))
        try store.commit([.update(pinUpdate("s", 1))])
        _ = try store.load("s")

        try postgres.stop()
        let write = failure { try store.commit([.update(pinUpdate("s", 2))]) }
        #expect(write?.isWriteFailure == true)
        #expect(write?.message.hasPrefix("storage write failed: PostgreSQL at \(store.url): cannot connect") == true, "\(write?.message ?? "")")
        #expect(write?.message.contains("Connection refused") == true, "\(write?.message ?? "")")
        let read = failure { _ = try store.load("s") }
        #expect(read?.isReadFailure == true)
        #expect(read?.message.hasPrefix("storage read failed: PostgreSQL at \(store.url): cannot connect") == true, "\(read?.message ?? "")")
        let list = failure { _ = try store.list() }
        #expect(list?.isReadFailure == true)
        let open = failure { _ = try PostgresSessionStore(url: url, connectTimeout: Self.connectTimeout) }
        #expect(open?.isCannotOpen == true)
        #expect(open?.message.hasPrefix("cannot open the session store at \(store.url): cannot connect") == true, "\(open?.message ?? "")")
        for error in [write, read, list, open] { #expect(error?.message.contains("s3cret") == false) }

        try postgres.start()
        try store.commit([.update(pinUpdate("s", 3))])
        #expect(try store.load("s")?.record.annotations.map(\.id) == ["a1", "a3"])
        #expect(try store.list().map { [$0.id, "\($0.seq)", "\($0.annotationCount)"] } == [["s", "3", "2"]])
    }

    @Test func aServerThatStopsAnsweringFailsTheCallAfterTheOperationTimeout() throws {
        let postgres = try PostgresFixture()
        defer { postgres.shutdown() }
        let url = try postgres.createDatabase()
        let store = try PostgresSessionStore(url: url, connectTimeout: Self.connectTimeout, operationTimeout: .seconds(1))
        try store.commit([.update(pinUpdate("s", 1))])
        // Another client holds the table: the store's commit waits on its lock and gets no answer.
        let holder = try postgres.psqlInBackground(url, "BEGIN; LOCK TABLE sessions IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(60);", as: "holder")
        defer { holder.terminate(); holder.waitUntilExit() }
        let deadline = Date(timeIntervalSinceNow: 10)
        while try postgres.psql(url, "SELECT count(*) FROM pg_locks WHERE relation = 'sessions'::regclass AND mode = 'AccessExclusiveLock' AND granted") == "0" {
            try #require(Date() < deadline, "the lock was never taken")
            Thread.sleep(forTimeInterval: 0.05)
        }
        let write = failure(within: .seconds(5) * Self.slowdown) { try store.commit([.update(pinUpdate("s", 2))]) }
        #expect(write?.message == "storage write failed: PostgreSQL at \(store.url): no answer within 1.0 seconds")
        #expect(try postgres.endSessions(of: "holder") == 1)
        holder.waitUntilExit()
        // The abandoned commit's backend gets the lock and rolls back (its client is gone); the store goes on.
        try store.commit([.update(pinUpdate("s", 3))])
        #expect(try store.load("s")?.record.annotations.map(\.id) == ["a1", "a3"])
    }

    @Test func aURLThatIsNotPostgreSQLsIsRefusedWithoutItsPassword() throws {
        let notPostgres = #expect(throws: StorageError.self) { try PostgresSessionStore(url: "mysql://root:hunter2@db:3306/maps") }
        #expect(notPostgres?.message == "cannot open the session store at mysql://root@db:3306/maps: the scheme is mysql://, not postgres://")
        let noUser = #expect(throws: StorageError.self) { try PostgresSessionStore(url: "postgres://db/maps") }
        #expect(noUser?.message == "cannot open the session store at postgres://db/maps: no user (postgres://user@host/database)")
        let tls = #expect(throws: StorageError.self) { try PostgresSessionStore(url: "postgresql://u:p@w@db/maps?sslmode=sometimes") }
        #expect(tls?.message == "cannot open the session store at postgresql://u@db/maps?sslmode=sometimes: sslmode=sometimes: use disable, allow, prefer, require, verify-ca or verify-full")
        #expect(PostgresSessionStore.redacted("postgres://u:p%40ss@h:5432/d") == "postgres://u@h:5432/d")
        #expect(PostgresSessionStore.isPostgresURL("PostgreSQL://u@h/d") && !PostgresSessionStore.isPostgresURL("/var/lib/meridian"))
    }
}
