import Foundation
import Logging
import MeridianCore
import MeridianDashboard
import MeridianPostgres
import MeridianRedis
import MeridianServer
import MeridianSettings
import MeridianStorage
import MeridianTransport
import MeridianTransportCore

/// The effective settings turned into the server's configuration. Each value has
/// passed its own check where it is declared (`ServeSettings`); the checks that
/// relate two settings are made here.
struct ResolvedSettings {
    var server: ServerConfiguration
    var logLevel: Logger.Level
    var dashboard: Dashboard.Configuration
    /// The `store` setting, a PostgreSQL URL: opened by ``openStore()``, once the server is to run.
    var storeURL: String?

    init(_ s: EffectiveSettings) throws {
        guard (s.tlsCert == nil) == (s.tlsKey == nil) else { throw SettingError("tlsCert and tlsKey must be set together") }
        guard s.queueHardLimit > s.queueHighWater else { throw SettingError("queueHardLimit must exceed queueHighWater") }
        guard s.conflateAbove < s.queueHighWater else { throw SettingError("conflateAbove must be below queueHighWater") }
        guard s.idleTimeout > s.pingInterval else { throw SettingError("idleTimeout must exceed pingInterval") }
        logLevel = try Self.choice(Logger.Level(rawValue: s.logLevel), "logLevel", s.logLevel)

        var transport = TransportConfiguration()
        transport.host = s.host
        transport.port = s.port
        transport.maxMessageBytes = s.maxMessageBytes
        transport.queueHighWaterBytes = s.queueHighWater
        transport.queueHardLimitBytes = s.queueHardLimit
        transport.conflateAboveBytes = s.conflateAbove
        transport.slowConsumerGrace = .milliseconds(Int(s.slowConsumerGrace * 1000))
        transport.closeTimeout = .seconds(s.closeTimeout)
        transport.pingInterval = .seconds(s.pingInterval)
        transport.idleTimeout = .seconds(s.idleTimeout)
        transport.maxConnections = s.maxConnections
        transport.maxConnectionsPerIP = s.maxConnectionsPerIp
        transport.handshakeTimeout = .milliseconds(Int(s.handshakeTimeout * 1000))
        transport.allowedOrigins = s.allowedOrigins
        transport.trustedProxies = try s.trustedProxies.map { text in
            guard let range = AddressRange(text) else {
                throw SettingError("trustedProxies \"\(text)\": use an IP address or a CIDR range such as 10.0.0.0/8 or fd00::/8")
            }
            return range
        }
        transport.tlsCertificatePath = s.tlsCert
        transport.tlsPrivateKeyPath = s.tlsKey
        transport.tlsClientCAPath = s.tlsClientCa
        transport.sharedFrameBudgetBytes = s.sharedFrameBudget
        transport.eventLoop = try Self.choice(EventLoop(rawValue: s.eventLoop), "eventLoop", s.eventLoop)
        var defaults = SessionSettings()
        defaults.dragPolicy = try Self.choice(DragPolicy(rawValue: s.dragPolicy), "dragPolicy", s.dragPolicy)
        defaults.leaseTimeout = .milliseconds(Int(s.leaseTimeout * 1000))
        var limits = SessionLimits()
        limits.maxParticipants = s.maxParticipants
        limits.maxAnnotations = s.maxAnnotations
        limits.maxCoordinatesPerShape = s.maxCoordinates
        limits.maxMetadataBytes = s.maxMetadataBytes
        limits.maxTitleLength = s.maxTitleLength
        limits.presenceBatchAbove = s.presenceBatchAbove
        server = ServerConfiguration(transport: transport, sessionDefaults: defaults, limits: limits, historySize: s.historySize)
        server.rateLimit = RateLimit(perSecond: s.rateLimit, burst: s.rateBurst)
        server.storage.dataDirectory = s.dataDir
        if let store = s.store {
            guard PostgresSessionStore.isPostgresURL(store) else {
                throw SettingError("store \"\(PostgresSessionStore.redacted(store))\": use a postgres://user:password@host:port/database URL")
            }
            storeURL = store
        }
        server.storage.idleUnloadAfter = .milliseconds(Int(s.idleUnload * 1000))
        server.storage.maxLoadedSessions = s.maxSessions
        server.threads = s.threads == 0 ? Self.coresAvailable : s.threads
        if let url = s.cluster {
            // Every node must see every other node's commits: the embedded SQLite file is one node's.
            guard s.store != nil else {
                throw SettingError("cluster needs a store every node shares: set store to a postgres://user:password@host:port/database URL")
            }
            let redis: RedisAddress
            switch RedisAddress.parse(url) {
            case .success(let address): redis = address
            case .failure(let error): throw SettingError(error.message)
            }
            server.cluster = ClusterConfiguration(
                redis: redis, leaseTTL: .milliseconds(Int(s.clusterLeaseTtl * 1000)), advertise: s.advertise ?? "\(s.host):\(s.port)")
        }
        server.eventLog = EventLogConfiguration(
            retention: EventLogRetention(maxAge: .milliseconds(Int64(s.eventLogMaxAge * 1000)), maxEntries: s.eventLogMaxEntries))
        dashboard = Dashboard.Configuration(
            tileURL: s.dashboardTiles, styleURL: s.dashboardStyle, directory: s.dashboardDirectory.map { URL(fileURLWithPath: $0) },
            leafletDirectory: URL(fileURLWithPath: s.leafletDirectory),
            mapLibreDirectory: URL(fileURLWithPath: s.maplibreDirectory))
    }

    /// Connects to the `store` database, if one is set, and gives it to the server in place of
    /// the data directory's SQLite file; separate from `init`, which `--print-config` runs too.
    /// - Throws: ``StorageError/cannotOpen(_:_:)`` naming the URL without its password and the cause.
    mutating func openStore() throws(StorageError) {
        guard let storeURL else { return }
        // A node paused in the middle of a commit loses its transaction (and the rows it locked)
        // within a lease time: the session's next owner never waits for it.
        let idle = max(.milliseconds(500), min(.seconds(2), server.cluster?.leaseTTL ?? .seconds(2)))
        let store = try PostgresSessionStore(url: storeURL, idleTransactionTimeout: idle)
        server.storage.store = store
        // The event log in the same database: one history for every node, kept across failovers.
        server.storage.eventLogStore = PostgresEventLogStore(beside: store)
    }

    /// A declared choice as the server's type: the declaration lists the same names, so a
    /// refusal here means they have drifted apart.
    private static func choice<T>(_ value: T?, _ key: String, _ name: String) throws -> T {
        guard let value else { throw SettingError("\(key) \"\(name)\" is declared but unknown to the server") }
        return value
    }

    /// The cores this process may run on: its CPU affinity (`taskset`, a container's cpuset) as
    /// Linux reports it in /proc/self/status, else every online core.
    static var coresAvailable: Int {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed:") }) else {
            return max(1, ProcessInfo.processInfo.activeProcessorCount)
        }
        let mask = line.dropFirst("Cpus_allowed:".count).filter(\.isHexDigit)
        return max(1, mask.reduce(0) { $0 + (Int(String($1), radix: 16) ?? 0).nonzeroBitCount })
    }
}
