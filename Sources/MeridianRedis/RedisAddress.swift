/// Where a Redis server listens: `redis://HOST:PORT` (port 6379 by default; a database
/// number after a slash is not supported: Meridian's keys share database 0).
public struct RedisAddress: Hashable, Sendable, CustomStringConvertible {
    public var host: String
    public var port: Int

    public init(host: String, port: Int = 6379) {
        self.host = host
        self.port = port
    }

    /// Parses `redis://HOST[:PORT]`; nil with a reason for anything else.
    public static func parse(_ url: String) -> Result<RedisAddress, RedisError> {
        let refuse = { (why: String) in Result<RedisAddress, RedisError>.failure(RedisError(.unexpected, "cluster address \(url): \(why)")) }
        guard url.hasPrefix("redis://") else { return refuse("expected redis://HOST:PORT") }
        var rest = Substring(url.dropFirst("redis://".count))
        if rest.hasSuffix("/") { rest = rest.dropLast() }
        guard !rest.contains("/"), !rest.contains("@") else { return refuse("a database, user or password is not supported") }
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
        return .success(RedisAddress(host: String(host), port: port))
    }

    public var description: String { "redis://\(host.contains(":") ? "[\(host)]" : host):\(port)" }
}
