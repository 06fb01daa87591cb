import Foundation

/// Where a Redis server listens and how to log in: `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`
/// (port 6379 and database 0 by default). With a password every connection sends `AUTH` (with
/// the user too: a Redis 6 ACL user) before anything else, and `SELECT` for a database other than 0.
public struct RedisAddress: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var user: String?
    public var password: String?
    public var database: Int

    public init(host: String, port: Int = 6379, user: String? = nil, password: String? = nil, database: Int = 0) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
    }

    /// Parses a `redis://` URL; a failure names the URL without its password and the reason.
    public static func parse(_ url: String) -> Result<RedisAddress, RedisError> {
        let shown = redacted(url)
        let refuse = { (why: String) in Result<RedisAddress, RedisError>.failure(RedisError(.unexpected, "cluster address \(shown): \(why)")) }
        guard url.hasPrefix("redis://") else {
            return refuse(url.hasPrefix("rediss://") ? "TLS to Redis (rediss://) is not supported by this build's hiredis" : "expected redis://HOST:PORT")
        }
        var rest = Substring(url.dropFirst("redis://".count))
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            let path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
            if !path.isEmpty {
                guard let n = Int(path), (0...15_999).contains(n) else { return refuse("the database must be a number, as in redis://HOST:PORT/0") }
                database = n
            }
        }
        var user: String?, password: String?
        if let at = rest.lastIndex(of: "@") {
            let info = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let decode = { (s: Substring) in s.removingPercentEncoding ?? String(s) }
            if let colon = info.firstIndex(of: ":") {
                user = info[..<colon].isEmpty ? nil : decode(info[..<colon])
                password = decode(info[info.index(after: colon)...])
            } else {
                return refuse("a user needs a password (redis://USER:PASSWORD@HOST, or redis://:PASSWORD@HOST)")
            }
            guard password?.isEmpty == false else { return refuse("the password is empty") }
        }
        var host = rest
        var port = 6379
        if let colon = rest.lastIndex(of: ":"), !rest.hasSuffix("]") {
            host = rest[..<colon]
            guard let value = Int(rest[rest.index(after: colon)...]), (1...65_535).contains(value) else {
                return refuse("the port must be a number from 1 to 65535")
            }
            port = value
        }
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        guard !host.isEmpty else { return refuse("no host") }
        return .success(RedisAddress(host: String(host), port: port, user: user, password: password, database: database))
    }

    /// `url` with its password replaced by `***`.
    public static func redacted(_ url: String) -> String {
        guard let start = url.range(of: "://") else { return url }
        let rest = url[start.upperBound...]
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") else { return url }
        return String(url[...colon]) + "***" + String(url[at...])
    }

    /// The URL without its password: what messages and logs name.
    public var description: String {
        let login = password == nil ? "" : "\(user ?? ""):***@"
        return "redis://\(login)\(host.contains(":") ? "[\(host)]" : host):\(port)" + (database == 0 ? "" : "/\(database)")
    }
}
