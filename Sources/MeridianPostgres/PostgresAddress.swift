import Foundation
import PostgresNIO

/// Where a ``PostgresSessionStore`` connects: a `postgres://user:password@host:port/database`
/// URL (`postgresql://` too), and the same URL without its password, for messages and logs.
struct PostgresAddress: Sendable {
    var host: String
    var port: Int
    var user: String
    var password: String?
    var database: String
    /// The URL without the password: what every message names.
    var redacted: String

    /// Parses `url`; throws the reason it is refused (the caller names the URL).
    init(_ url: String) throws(PostgresAddress.Refusal) {
        redacted = Self.redact(url)
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased() else {
            throw Refusal("not a URL")
        }
        guard Self.schemes.contains(scheme) else { throw Refusal("the scheme is \(scheme)://, not postgres://") }
        guard let host = parts.host, !host.isEmpty else { throw Refusal("no host") }
        guard let user = parts.user, !user.isEmpty else { throw Refusal("no user (postgres://user@host/database)") }
        for item in parts.queryItems ?? [] where !(item.name == "sslmode" && item.value == "disable") {
            throw Refusal("unsupported parameter \(item.name)\(item.value.map { "=\($0)" } ?? "") (TLS is not supported yet)")
        }
        self.host = host
        self.port = parts.port ?? 5432
        self.user = user
        self.password = parts.password
        let path = parts.path.hasPrefix("/") ? String(parts.path.dropFirst()) : parts.path
        self.database = path.isEmpty ? user : path
    }

    struct Refusal: Error {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }

    /// The URL schemes of PostgreSQL, as libpq accepts them.
    static let schemes: Set<String> = ["postgres", "postgresql"]

    /// `url` with the password between `user:` and `@` left out, even when `url` does not parse.
    static func redact(_ url: String) -> String {
        guard let start = url.range(of: "://") else { return url }
        let rest = url[start.upperBound...]
        // The user information ends at the last @ before the path (a password may hold an @).
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@"),
              let colon = rest[..<at].firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + String(url[at...])
    }

    func configuration(connectTimeout: Duration, limits: SessionLimits) -> PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: .disable)
        configuration.options.connectTimeout = .nanoseconds(Self.nanoseconds(connectTimeout))
        configuration.options.additionalStartupParameters = limits.startupParameters
        return configuration
    }

    /// What PostgreSQL itself bounds on each of the store's connections, so that no stalled
    /// client — this node's or another's — holds the others up.
    struct SessionLimits: Sendable {
        /// A statement waiting longer for a lock fails (`lock_timeout`).
        var lock: Duration
        /// A transaction idle longer (its client stalled: a paused process, a frozen VM) is ended
        /// by PostgreSQL, and its locks with it (`idle_in_transaction_session_timeout`).
        var idleTransaction: Duration
        /// A statement running longer is cancelled (`statement_timeout`).
        var statement: Duration

        var startupParameters: [(String, String)] {
            [("lock_timeout", Self.milliseconds(lock)), ("idle_in_transaction_session_timeout", Self.milliseconds(idleTransaction)),
             ("statement_timeout", Self.milliseconds(statement))]
        }

        static func milliseconds(_ d: Duration) -> String { String(max(1, PostgresAddress.nanoseconds(d) / 1_000_000)) }
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
