import Foundation
import NIOSSL
import PostgresNIO

/// Where a ``PostgresSessionStore`` connects: a `postgres://user:password@host:port/database`
/// URL (`postgresql://` too), and the same URL without its password, for messages and logs.
///
/// TLS as libpq's parameters say it: `sslmode` `disable`, `allow` or `prefer` (the default:
/// TLS when the server offers it, unverified), `require` (TLS, unverified; verified against
/// `sslrootcert` when given, as libpq does), `verify-ca` (the server's certificate signed by
/// `sslrootcert`, or the system's roots) and `verify-full` (that, and the host name); `sslcert`
/// and `sslkey` give a client certificate.
struct PostgresAddress: Sendable {
    var host: String
    var port: Int
    var user: String
    var password: String?
    var database: String
    var tls: TLSSettings = TLSSettings()

    struct TLSSettings: Sendable, Equatable {
        enum Mode: String, Sendable, CaseIterable {
            case disable, allow, prefer, require
            case verifyCA = "verify-ca"
            case verifyFull = "verify-full"
        }
        var mode: Mode = .prefer
        var rootCertificate: String?
        var certificate: String?
        var key: String?
    }
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
        for item in parts.queryItems ?? [] {
            let value = item.value ?? ""
            switch item.name {
            case "sslmode":
                guard let mode = TLSSettings.Mode(rawValue: value) else {
                    throw Refusal("sslmode=\(value): use disable, allow, prefer, require, verify-ca or verify-full")
                }
                tls.mode = mode
            case "sslrootcert": tls.rootCertificate = value
            case "sslcert": tls.certificate = value
            case "sslkey": tls.key = value
            default:
                throw Refusal("unsupported parameter \(item.name)\(item.value.map { "=\($0)" } ?? "") (sslmode, sslrootcert, sslcert and sslkey are)")
            }
        }
        if (tls.certificate == nil) != (tls.key == nil) { throw Refusal("sslcert and sslkey go together") }
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

    /// The connection's TLS: reads the certificate files named, so it throws their problems.
    func tlsConfiguration() throws(Refusal) -> PostgresConnection.Configuration.TLS {
        guard tls.mode != .disable else { return .disable }
        var c = TLSConfiguration.makeClientConfiguration()
        let verified = tls.mode == .verifyCA || tls.mode == .verifyFull || (tls.mode == .require && tls.rootCertificate != nil)
        c.certificateVerification = !verified ? .none : tls.mode == .verifyFull ? .fullVerification : .noHostnameVerification
        do {
            if let root = tls.rootCertificate { c.trustRoots = .file(root) }
            if let certificate = tls.certificate, let key = tls.key {
                c.certificateChain = try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) }
                c.privateKey = .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))
            }
            let context = try NIOSSLContext(configuration: c)
            return tls.mode == .require || verified ? .require(context) : .prefer(context)
        } catch {
            throw Refusal("TLS: \(error)")
        }
    }

    func configuration(connectTimeout: Duration, limits: SessionLimits, tls: PostgresConnection.Configuration.TLS) -> PostgresConnection.Configuration {
        var configuration = PostgresConnection.Configuration(
            host: host, port: port, username: user, password: password, database: database, tls: tls)
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
