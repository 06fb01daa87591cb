import Foundation

/// Where a client connects: a `ws://` or `wss://` URL read into its parts.
public struct ServerEndpoint: Sendable, Equatable {
    /// True for `wss://`.
    public var secure: Bool
    /// The host name or address (an IPv6 address without its brackets).
    public var host: String
    /// The TCP port: the URL's, else 80 for `ws://` and 443 for `wss://`.
    public var port: Int
    /// The path and query of the upgrade request (at least `/`).
    public var path: String

    /// Reads `url`: `ws://HOST[:PORT][/PATH][?QUERY]` or `wss://…` (ports 80 and 443 by default).
    public init(url: String) throws(ClientError) {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(), scheme == "ws" || scheme == "wss" else {
            throw ClientError.invalidURL("\(url.prefix(200)): expected ws://HOST[:PORT]/PATH or wss://…")
        }
        guard let host = parts.host, !host.isEmpty else { throw ClientError.invalidURL("\(url.prefix(200)): no host") }
        secure = scheme == "wss"
        self.host = host.hasPrefix("[") ? String(host.dropFirst().dropLast()) : host
        port = parts.port ?? (secure ? 443 : 80)
        guard (1...65_535).contains(port) else { throw ClientError.invalidURL("\(url.prefix(200)): port \(port) is out of range") }
        let query = parts.percentEncodedQuery.map { "?\($0)" } ?? ""
        path = (parts.percentEncodedPath.isEmpty ? "/" : parts.percentEncodedPath) + query
    }

    /// The URL again, normalized.
    public var url: String {
        let shown = host.contains(":") ? "[\(host)]" : host
        return "\(secure ? "wss" : "ws")://\(shown):\(port)\(path)"
    }

    /// Whether the host is an IPv4 or IPv6 address rather than a name.
    var hostIsAddress: Bool {
        host.contains(":") || host.split(separator: ".").count == 4 && host.split(separator: ".").allSatisfy { UInt8($0) != nil }
    }
}

/// TLS for a `wss://` connection, the same for every transport.
public struct ClientTLS: Sendable, Equatable {
    /// PEM file of the certificate authorities to trust; nil trusts the system's.
    public var caFile: String?
    /// PEM file of the client's certificate (and its chain), for servers or proxies that ask for one.
    public var certificateFile: String?
    /// PEM file of the client certificate's private key.
    public var privateKeyFile: String?
    /// The name the server's certificate must carry, also sent as SNI; nil: the URL's host.
    /// Needed when the URL names the server by address.
    public var serverName: String?

    /// TLS settings; with the defaults the system's roots are trusted, no client certificate is
    /// sent and the server is checked against the URL's host.
    public init(caFile: String? = nil, certificateFile: String? = nil, privateKeyFile: String? = nil, serverName: String? = nil) {
        self.caFile = caFile
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
        self.serverName = serverName
    }

    /// Refuses settings no transport can use: half a client certificate, or an address without a name to check.
    func check(for endpoint: ServerEndpoint) throws(ClientError) {
        guard (certificateFile == nil) == (privateKeyFile == nil) else {
            throw ClientError.invalidURL("a client certificate needs both certificateFile and privateKeyFile")
        }
        if endpoint.secure, serverName == nil, endpoint.hostIsAddress {
            throw ClientError.invalidURL("\(endpoint.url): wss:// to an address needs ClientTLS.serverName, the name its certificate carries")
        }
    }
}
