import Foundation
import PostgresNIO

/// What went wrong, in words, from the errors of postgres-nio and SwiftNIO (whose own
/// descriptions of a `PSQLError` deliberately say nothing of the cause).
enum PostgresFailure {
    static func reason(_ error: any Error) -> String {
        switch error {
        case let e as PSQLError:
            return reason(e)
        case let e as PostgresConnections.Timeout:
            return e.description
        case let e as PostgresConnections.Closed:
            return e.description
        case let e as NIOConnectionError:
            if let dns = e.dnsAError ?? e.dnsAAAAError { return "cannot resolve \(e.host): \(reason(dns))" }
            let causes = e.connectionErrors.map { reason($0.error) }
            return causes.isEmpty ? "cannot connect to \(e.host):\(e.port)" : Array(Set(causes)).sorted().joined(separator: "; ")
        case let e as IOError:
            return String(cString: strerror(e.errnoCode))
        case let e as ChannelError:
            if case .connectTimeout(let t) = e { return "no connection within \(seconds(t))" }
            return "\(e)"
        case let e as PostgresDecodingError:
            return "column \(e.columnName): cannot decode \(e.postgresType) as \(e.targetType) (\(e.code))"
        default:
            return "\(error)"
        }
    }

    /// `lock_timeout` ran out (SQLSTATE 55P03, lock_not_available).
    static func isLockTimeout(_ e: PSQLError) -> Bool {
        e.code == .server && e.serverInfo?[.sqlState] == "55P03"
    }

    static func reason(_ e: PSQLError) -> String {
        if e.code == .server, let info = e.serverInfo {
            let state = info[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
            return "PostgreSQL: \(info[.message] ?? "error")\(state)"
        }
        let cause = e.underlying.map { ": \(reason($0))" } ?? ""
        switch e.code {
        case .connectionError: return "cannot connect\(cause)"
        case .serverClosedConnection: return "PostgreSQL closed the connection\(cause)"
        case .uncleanShutdown: return "the connection ended in the middle of a message\(cause)"
        case .clientClosedConnection: return "the connection was closed\(cause)"
        default: return "\(e.code)\(cause)"
        }
    }

    static func seconds(_ t: TimeAmount) -> String {
        let ms = t.nanoseconds / 1_000_000
        return ms % 1_000 == 0 ? "\(ms / 1_000) s" : "\(Double(ms) / 1_000) s"
    }
}
