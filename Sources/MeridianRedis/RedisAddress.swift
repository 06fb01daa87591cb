import Foundation

/// Where a Redis server listens and how to log in: `redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`
/// (port 6379 and database 0 by default), or `rediss://…` for TLS, with optional parameters
/// `?cacert=PATH` (the CA that signed the server's certificate; the system's roots without it)
/// and `cert=PATH&key=PATH` (a client certificate, for a server that asks for one). With a
/// password every connection sends `AUTH` (with the user too: a Redis 6 ACL user) before
/// anything else, and `SELECT` for a database other than 0.
public struct RedisAddress: Hashable, Sendable, CustomStringConvertible {
    /// The server's host name or IP address (an IPv6 address without its brackets).
    public var host: String
    /// The server's TCP port (6379 by default).
    public var port: Int
    /// The ACL user (Redis 6) sent with `AUTH`; nil: the default user.
    public var user: String?
    /// The password every connection sends with `AUTH` first; nil: no `AUTH`.
    public var password: String?
    /// The database number every connection chooses with `SELECT` (0, the default, sends none).
    public var database: Int
    /// TLS to the server (`rediss://`); nil: plain TCP.
    public var tls: RedisTLS?

    /// An address from its parts: by default port 6379, database 0, no login and plain TCP.
    public init(host: String, port: Int = 6379, user: String? = nil, password: String? = nil, database: Int = 0, tls: RedisTLS? = nil) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.tls = tls
    }

    /// Parses a `redis://` URL; a failure names the URL without its password and the reason.
    public static func parse(_ url: String) -> Result<RedisAddress, RedisError> {
        let shown = redacted(url)
        let refuse = { (why: String) in Result<RedisAddress, RedisError>.failure(RedisError(.unexpected, "cluster address \(shown): \(why)")) }
        let secure = url.hasPrefix("rediss://")
        guard secure || url.hasPrefix("redis://") else { return refuse("expected redis://HOST:PORT or rediss://HOST:PORT") }
        var rest = Substring(url.dropFirst(secure ? "rediss://".count : "redis://".count))
        var tls: RedisTLS? = secure ? RedisTLS() : nil
        if let question = rest.firstIndex(of: "?") {
            let query = rest[rest.index(after: question)...]
            rest = rest[..<question]
            guard secure else { return refuse("parameters (cacert, cert, key) go with rediss:// only") }
            for item in query.split(separator: "&") {
                let pair = item.split(separator: "=", maxSplits: 1)
                let name = String(pair[0]), value = pair.count == 2 ? (pair[1].removingPercentEncoding ?? String(pair[1])) : ""
                guard !value.isEmpty else { return refuse("parameter \(name) needs a value") }
                switch name {
                case "cacert": tls?.caFile = value
                case "cert": tls?.certificateFile = value
                case "key": tls?.keyFile = value
                default: return refuse("unsupported parameter \(name) (cacert, cert and key are)")
                }
            }
            guard (tls?.certificateFile == nil) == (tls?.keyFile == nil) else { return refuse("cert and key go together") }
        }
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
        return .success(RedisAddress(host: String(host), port: port, user: user, password: password, database: database, tls: tls))
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
        return "\(tls == nil ? "redis" : "rediss")://\(login)\(host.contains(":") ? "[\(host)]" : host):\(port)" + (database == 0 ? "" : "/\(database)")
    }
}

/// TLS to Redis: whom to trust and, for a server that asks, the client's certificate. The
/// server's certificate is always verified, and its name (or address) must be the host's.
public struct RedisTLS: Hashable, Sendable {
    /// PEM file of the CA certificates to trust; nil: the system's.
    public var caFile: String?
    /// PEM files of the client's certificate (chain) and its key.
    public var certificateFile: String?
    /// PEM file of the client certificate's private key; given together with `certificateFile`.
    public var keyFile: String?

    /// TLS settings; all nil: the system's roots and no client certificate.
    public init(caFile: String? = nil, certificateFile: String? = nil, keyFile: String? = nil) {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }
}
