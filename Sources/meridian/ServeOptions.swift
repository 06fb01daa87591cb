import Foundation

/// Every setting of `meridian serve`, each optional so that the sources can
/// be layered: flags over environment (`MERIDIAN_*`) over the config file
/// over the defaults. Keys are the JSON keys of the config file; the
/// environment variable of `maxSessions` is `MERIDIAN_MAX_SESSIONS`.
struct ServeOptions: Codable, Equatable, Sendable {
    var host: String?
    var port: Int?
    var dataDir: String?
    var idleUnload: Double?
    var maxSessions: Int?
    var dragPolicy: String?
    var leaseTimeout: Double?
    var historySize: Int?
    var maxMessageBytes: Int?
    var queueHighWater: Int?
    var queueHardLimit: Int?
    var conflateAbove: Int?
    var slowConsumerGrace: Double?
    var closeTimeout: Int?
    var pingInterval: Int?
    var idleTimeout: Int?
    var logLevel: String?
    var dashboardTiles: String?
    var dashboardDirectory: String?
    var leafletDirectory: String?
    var auth: String?
    var jwtSecretFile: String?
    var jwtPublicKeyFile: String?
    var jwtAudience: String?
    var jwtIssuer: String?
    var rateLimit: Double?
    var rateBurst: Int?
    var maxParticipants: Int?
    var maxAnnotations: Int?
    var maxCoordinates: Int?
    var maxMetadataBytes: Int?
    var maxTitleLength: Int?
    var tlsCert: String?
    var tlsKey: String?
    var allowedOrigins: [String]?
    var maxConnections: Int?
    var maxConnectionsPerIp: Int?
    var handshakeTimeout: Double?
    var eventLogMaxAge: Double?
    var eventLogMaxEntries: Int?
    var presenceBatchAbove: Int?
    var sharedFrameBudget: Int?
    var eventLoop: String?

    static let defaults = ServeOptions(
        host: "127.0.0.1", port: 8080, dataDir: nil, idleUnload: 300, maxSessions: 10_000,
        dragPolicy: "exclusive", leaseTimeout: 10, historySize: 4_096, maxMessageBytes: 65_536,
        queueHighWater: 1 << 20, queueHardLimit: 8 << 20, conflateAbove: 16 << 10, slowConsumerGrace: 2, closeTimeout: 30,
        pingInterval: 30, idleTimeout: 75, logLevel: "info",
        dashboardTiles: nil, dashboardDirectory: nil, leafletDirectory: "/usr/share/javascript/leaflet",
        auth: "jwt", jwtSecretFile: nil, jwtPublicKeyFile: nil, jwtAudience: nil, jwtIssuer: nil,
        rateLimit: 200, rateBurst: 400, maxParticipants: 5_000, maxAnnotations: 100_000, maxCoordinates: 10_000,
        maxMetadataBytes: 4_096, maxTitleLength: 256,
        tlsCert: nil, tlsKey: nil, allowedOrigins: [], maxConnections: 100_000, maxConnectionsPerIp: 1_000,
        handshakeTimeout: 10, eventLogMaxAge: 7 * 24 * 3600, eventLogMaxEntries: 10_000,
        presenceBatchAbove: 100, sharedFrameBudget: 256 << 20, eventLoop: "libev")

    /// These options, with `lower` filling what is unset.
    func over(_ lower: ServeOptions) throws -> ServeOptions {
        var merged = try Self.dictionary(lower)
        merged.merge(try Self.dictionary(self)) { _, upper in upper }
        return try JSONDecoder().decode(Self.self, from: JSONSerialization.data(withJSONObject: merged))
    }

    /// Options from a JSON config file; unknown keys are refused.
    static func file(_ path: String) throws -> ServeOptions {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw ConfigError("cannot read config file \(path): \(error.localizedDescription)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw ConfigError("config file \(path) is not a JSON object")
        }
        let known = Set(try dictionary(defaults).keys).union([
            "dataDir", "dashboardTiles", "dashboardDirectory", "jwtSecretFile", "jwtPublicKeyFile", "jwtAudience", "jwtIssuer",
            "tlsCert", "tlsKey",
        ])
        if let unknown = object.keys.filter({ !known.contains($0) }).sorted().first {
            throw ConfigError("config file \(path): unknown key \"\(unknown)\" (known: \(known.sorted().joined(separator: ", ")))")
        }
        do { return try JSONDecoder().decode(Self.self, from: data) } catch {
            throw ConfigError("config file \(path): \(describe(error))")
        }
    }

    /// Options from `MERIDIAN_*` environment variables.
    static func environment(_ env: [String: String]) throws -> ServeOptions {
        var object: [String: Any] = [:]
        for child in Mirror(reflecting: defaults).children {
            guard let key = child.label else { continue }
            let name = variable(for: key)
            guard let text = env[name] else { continue }
            // By declared type: a nil default (dataDir, tlsCert) would pass any `is T?` test.
            switch type(of: child.value) {
            case is Int?.Type:
                guard let n = Int(text) else { throw ConfigError("\(name)=\(text): not an integer") }
                object[key] = n
            case is Double?.Type:
                guard let n = Double(text), n.isFinite else { throw ConfigError("\(name)=\(text): not a number") }
                object[key] = n
            case is [String]?.Type:
                object[key] = commaSeparated(text)
            default:
                object[key] = text
            }
        }
        return try JSONDecoder().decode(Self.self, from: JSONSerialization.data(withJSONObject: object))
    }

    /// "a, b,,c" → ["a", "b", "c"] (lists in environment variables and flags).
    static func commaSeparated(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    /// `maxSessions` → `MERIDIAN_MAX_SESSIONS`.
    static func variable(for key: String) -> String {
        "MERIDIAN_" + key.reduce(into: "") { out, c in
            if c.isUppercase { out.append("_") }
            out.append(c.uppercased())
        }
    }

    /// Pretty JSON with sorted keys; unset values are `null`.
    func json() throws -> String {
        var object = try Self.dictionary(self)
        for child in Mirror(reflecting: self).children where object[child.label!] == nil { object[child.label!] = NSNull() }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    private static func dictionary(_ o: ServeOptions) throws -> [String: Any] {
        try JSONSerialization.jsonObject(with: JSONEncoder().encode(o)) as? [String: Any] ?? [:]
    }

    private static func describe(_ error: any Error) -> String {
        switch error as? DecodingError {
        case .typeMismatch(let type, let c)?: "\(c.codingPath.map(\.stringValue).joined(separator: ".")): expected \(type)"
        case .dataCorrupted(let c)?: c.debugDescription
        default: "\(error)"
        }
    }
}

struct ConfigError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
