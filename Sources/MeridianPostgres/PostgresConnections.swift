import Dispatch
import Logging
import MeridianSync
import PostgresNIO

/// The connections of one ``PostgresSessionStore``, lent one at a time to the storage
/// threads that call it, which block until PostgreSQL answers: the store's API is
/// synchronous and runs only on threads of its own (the writer's, the readers').
///
/// A connection is opened when none is idle, so there are about as many as threads that
/// call at once. One that failed for any reason but an SQL error is closed, and the next
/// call opens a new one: after PostgreSQL restarts, calls succeed again by themselves.
/// Every operation is bounded: connecting by `connectTimeout`, a whole operation (a query,
/// a transaction) by `operationTimeout`, after which its connection is closed.
final class PostgresConnections: Sendable {
    let address: PostgresAddress
    let connectTimeout: Duration
    let operationTimeout: Duration
    private let configuration: PostgresConnection.Configuration
    private let idle = Locked<[PostgresConnection]>([])
    private let lastID = Locked(0)
    /// postgres-nio logs nothing the store does not report in its errors.
    private let logger = Logger(label: "meridian.postgres", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Most idle connections kept; more are closed when given back.
    private static let maxIdle = 8

    init(address: PostgresAddress, connectTimeout: Duration, operationTimeout: Duration, limits: PostgresAddress.SessionLimits,
         tls: PostgresConnection.Configuration.TLS) {
        self.address = address
        self.connectTimeout = connectTimeout
        self.operationTimeout = operationTimeout
        configuration = address.configuration(connectTimeout: connectTimeout, limits: limits, tls: tls)
    }

    deinit {
        for connection in idle.withLock({ $0 }) { Self.close(connection) }
    }

    /// Runs `body` with a connection no other thread uses meanwhile. Throws what `body`
    /// throws, why no connection could be had, or a ``Timeout``.
    func withConnection<T>(_ body: (BlockingConnection) throws -> T) throws -> T {
        let connection = try take()
        let timedOut = Locked(false)
        // The watchdog ends an operation PostgreSQL does not answer (a host gone silent).
        let watchdog = connection.eventLoop.scheduleTask(in: .nanoseconds(PostgresAddress.nanoseconds(operationTimeout))) {
            timedOut.withLock { $0 = true }
            Self.close(connection)
        }
        let lent = BlockingConnection(connection: connection, logger: logger, deadline: .now() + .nanoseconds(Int(PostgresAddress.nanoseconds(operationTimeout))), limit: operationTimeout)
        defer {
            watchdog.cancel()
            if lent.isUsable, !timedOut.withLock({ $0 }) { giveBack(connection) } else { Self.close(connection) }
        }
        do {
            return try body(lent)
        } catch {
            if timedOut.withLock({ $0 }) { throw Timeout(limit: operationTimeout) }
            throw error
        }
    }

    /// An operation PostgreSQL did not finish within `limit`; its connection was closed.
    struct Timeout: Error, CustomStringConvertible {
        var limit: Duration
        var description: String { "no answer within \(limit)" }
    }

    /// A statement sent on a connection that had closed meanwhile (PostgreSQL ended the session:
    /// a transaction left idle too long, a restart, the backend terminated).
    struct Closed: Error, CustomStringConvertible {
        var description: String { "PostgreSQL had closed the connection (an idle transaction ended, a restart)" }
    }

    private func take() throws -> PostgresConnection {
        while let connection = idle.withLock({ $0.popLast() }) {
            // Closed while idle: PostgreSQL restarted or ended the session.
            if !connection.isClosed { return connection }
        }
        let id = lastID.withLock { $0 += 1; return $0 }
        return try PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.any(), configuration: configuration, id: id, logger: logger
        ).wait()
    }

    /// Closes `connection` without waiting. The callback keeps the connection alive until its
    /// channel is closed: postgres-nio asserts that a connection is closed when it is freed.
    private static func close(_ connection: PostgresConnection) {
        let closing: EventLoopFuture<Void> = connection.close()
        closing.whenComplete { _ in withExtendedLifetime(connection) {} }
    }

    private func giveBack(_ connection: PostgresConnection) {
        let kept = idle.withLock { idle in
            guard idle.count < Self.maxIdle else { return false }
            idle.append(connection)
            return true
        }
        if !kept { Self.close(connection) }
    }
}

/// A connection lent to one operation, whose queries block the calling thread.
final class BlockingConnection {
    private let connection: PostgresConnection
    private let logger: Logger
    /// When the whole operation must have ended, and how long it was given.
    private let deadline: DispatchTime
    private let limit: Duration
    /// False once a query failed for another reason than an SQL error: the connection is then
    /// in an unknown state, and closed rather than lent again.
    private(set) var isUsable = true

    init(connection: PostgresConnection, logger: Logger, deadline: DispatchTime, limit: Duration) {
        self.connection = connection
        self.logger = logger
        self.deadline = deadline
        self.limit = limit
    }

    /// Runs `query` and returns its rows and its command's row count. Never waits past the
    /// operation's deadline, whatever the connection does: a statement on a connection that
    /// PostgreSQL closed meanwhile may never be answered (the thread would wait forever).
    @discardableResult
    func run(_ query: PostgresQuery) throws -> PostgresQueryResult {
        guard !connection.isClosed else {
            isUsable = false
            throw PostgresConnections.Closed()
        }
        let answered = DispatchSemaphore(value: 0)
        let outcome = Locked<Result<PostgresQueryResult, any Error>?>(nil)
        connection.query(query, logger: logger).whenComplete { result in
            outcome.withLock { $0 = result }
            answered.signal()
        }
        guard answered.wait(timeout: deadline) == .success, let result = outcome.withLock({ $0 }) else {
            isUsable = false
            throw PostgresConnections.Timeout(limit: limit)
        }
        do {
            return try result.get()
        } catch {
            if !Self.leavesConnectionUsable(error) || connection.isClosed { isUsable = false }
            throw error
        }
    }

    /// An SQL error (a constraint, a syntax error) leaves the session as it was; a fatal one
    /// (PostgreSQL shutting down, the backend terminated) and every other failure do not.
    private static func leavesConnectionUsable(_ error: any Error) -> Bool {
        guard let error = error as? PSQLError, error.code == .server else { return false }
        return !["FATAL", "PANIC"].contains(error.serverInfo?[.severity] ?? "")
    }

    /// Runs `body` in one transaction: committed if it returns, rolled back if it throws.
    func transaction<T>(_ body: () throws -> T) throws -> T {
        try run("BEGIN")
        let value: T
        do {
            value = try body()
        } catch {
            // Unusable: the transaction ends with the connection, which is closed.
            if isUsable { _ = try? run("ROLLBACK") }
            throw error
        }
        try run("COMMIT")
        return value
    }
}
