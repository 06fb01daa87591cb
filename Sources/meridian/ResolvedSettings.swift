import ArgumentParser
import Foundation
import Logging
import MeridianCore
import MeridianDashboard
import MeridianServer
import MeridianStorage
import MeridianTransport
import MeridianTransportCore

/// Effective options checked and turned into the server's configuration.
struct ResolvedSettings {
    var server: ServerConfiguration
    var logLevel: Logger.Level
    var dashboard: Dashboard.Configuration

    init(_ o: ServeOptions) throws {
        let d = ServeOptions.defaults
        let port = o.port ?? d.port!, lease = o.leaseTimeout ?? d.leaseTimeout!, history = o.historySize ?? d.historySize!
        let maxMessage = o.maxMessageBytes ?? d.maxMessageBytes!
        let high = o.queueHighWater ?? d.queueHighWater!, hard = o.queueHardLimit ?? d.queueHardLimit!
        let closeTimeout = o.closeTimeout ?? d.closeTimeout!, ping = o.pingInterval ?? d.pingInterval!, idle = o.idleTimeout ?? d.idleTimeout!
        let maxSessions = o.maxSessions ?? d.maxSessions!, idleUnload = o.idleUnload ?? d.idleUnload!
        let grace = o.slowConsumerGrace ?? d.slowConsumerGrace!
        let maxConnections = o.maxConnections ?? d.maxConnections!, perIP = o.maxConnectionsPerIp ?? d.maxConnectionsPerIp!
        let handshakeTimeout = o.handshakeTimeout ?? d.handshakeTimeout!
        guard maxConnections >= 1, perIP >= 1 else { throw ValidationError("maxConnections and maxConnectionsPerIp must be at least 1") }
        guard handshakeTimeout >= 1 else { throw ValidationError("handshakeTimeout must be at least 1 s") }
        guard (o.tlsCert == nil) == (o.tlsKey == nil) else { throw ValidationError("tlsCert and tlsKey must be set together") }
        guard (0...65_535).contains(port) else { throw ValidationError("port must be within 0...65535") }
        guard lease >= 0.1 else { throw ValidationError("leaseTimeout must be at least 0.1 s") }
        guard history >= 1 else { throw ValidationError("historySize must be at least 1") }
        guard maxMessage >= 1_024 else { throw ValidationError("maxMessageBytes must be at least 1024") }
        guard high > 0, hard > high else { throw ValidationError("queueHardLimit must exceed queueHighWater") }
        let conflateAbove = o.conflateAbove ?? d.conflateAbove!
        guard (0..<high).contains(conflateAbove) else { throw ValidationError("conflateAbove must be at least 0 and below queueHighWater") }
        guard closeTimeout >= 1 else { throw ValidationError("closeTimeout must be at least 1 s") }
        guard idle > ping, ping > 0 else { throw ValidationError("idleTimeout must exceed pingInterval") }
        guard maxSessions >= 1 else { throw ValidationError("maxSessions must be at least 1") }
        guard idleUnload >= 0 else { throw ValidationError("idleUnload must not be negative") }
        guard grace >= 0 else { throw ValidationError("slowConsumerGrace must not be negative") }
        let policyName = o.dragPolicy ?? d.dragPolicy!
        guard let policy = DragPolicy(rawValue: policyName) else {
            throw ValidationError("dragPolicy \"\(policyName)\": use exclusive, priority or last-writer-wins")
        }
        let levelName = o.logLevel ?? d.logLevel!
        guard let level = Logger.Level(rawValue: levelName) else {
            throw ValidationError("logLevel \"\(levelName)\": use trace, debug, info, notice, warning, error or critical")
        }
        logLevel = level
        let loopName = o.eventLoop ?? d.eventLoop!
        guard let eventLoop = EventLoop(rawValue: loopName) else {
            throw ValidationError("eventLoop \"\(loopName)\": use libev or poll")
        }

        var transport = TransportConfiguration()
        transport.host = o.host ?? d.host!
        transport.port = port
        transport.maxMessageBytes = maxMessage
        transport.queueHighWaterBytes = high
        transport.queueHardLimitBytes = hard
        transport.conflateAboveBytes = conflateAbove
        transport.slowConsumerGrace = .milliseconds(Int(grace * 1000))
        transport.closeTimeout = .seconds(closeTimeout)
        transport.pingInterval = .seconds(ping)
        transport.idleTimeout = .seconds(idle)
        transport.maxConnections = maxConnections
        transport.maxConnectionsPerIP = perIP
        transport.handshakeTimeout = .milliseconds(Int(handshakeTimeout * 1000))
        transport.allowedOrigins = o.allowedOrigins ?? d.allowedOrigins!
        transport.tlsCertificatePath = o.tlsCert
        transport.tlsPrivateKeyPath = o.tlsKey
        transport.sharedFrameBudgetBytes = o.sharedFrameBudget ?? d.sharedFrameBudget!
        guard transport.sharedFrameBudgetBytes >= 0 else { throw ValidationError("sharedFrameBudget must be at least 0") }
        transport.eventLoop = eventLoop
        var defaults = SessionSettings()
        defaults.dragPolicy = policy
        defaults.leaseTimeout = .milliseconds(Int(lease * 1000))
        var limits = SessionLimits()
        limits.maxParticipants = o.maxParticipants ?? d.maxParticipants!
        limits.maxAnnotations = o.maxAnnotations ?? d.maxAnnotations!
        limits.maxCoordinatesPerShape = o.maxCoordinates ?? d.maxCoordinates!
        limits.maxMetadataBytes = o.maxMetadataBytes ?? d.maxMetadataBytes!
        limits.maxTitleLength = o.maxTitleLength ?? d.maxTitleLength!
        limits.presenceBatchAbove = o.presenceBatchAbove ?? d.presenceBatchAbove!
        guard limits.presenceBatchAbove >= 0 else { throw ValidationError("presenceBatchAbove must be at least 0") }
        for (key, value) in [
            ("maxParticipants", limits.maxParticipants), ("maxAnnotations", limits.maxAnnotations),
            ("maxCoordinates", limits.maxCoordinatesPerShape), ("maxMetadataBytes", limits.maxMetadataBytes),
            ("maxTitleLength", limits.maxTitleLength),
        ] where value < 1 {
            throw ValidationError("\(key) must be at least 1")
        }
        guard limits.maxCoordinatesPerShape >= 4 else { throw ValidationError("maxCoordinates must be at least 4 (a polygon ring)") }
        let rate = o.rateLimit ?? d.rateLimit!, burst = o.rateBurst ?? d.rateBurst!
        guard rate > 0, burst >= 1 else { throw ValidationError("rateLimit must be positive and rateBurst at least 1") }
        guard ["jwt", "none"].contains(o.auth ?? d.auth!) else { throw ValidationError("auth \"\(o.auth!)\": use jwt or none") }
        server = ServerConfiguration(transport: transport, sessionDefaults: defaults, limits: limits, historySize: history)
        server.rateLimit = RateLimit(perSecond: rate, burst: burst)
        server.storage.dataDirectory = o.dataDir
        server.storage.idleUnloadAfter = .milliseconds(Int(idleUnload * 1000))
        server.storage.maxLoadedSessions = maxSessions
        server.eventLog = try Self.eventLog(o)
        dashboard = Dashboard.Configuration(
            tileURL: o.dashboardTiles, directory: o.dashboardDirectory.map { URL(fileURLWithPath: $0) },
            leafletDirectory: URL(fileURLWithPath: o.leafletDirectory ?? d.leafletDirectory!))
    }

    private static func eventLog(_ o: ServeOptions) throws -> EventLogConfiguration {
        let d = ServeOptions.defaults
        let age = o.eventLogMaxAge ?? d.eventLogMaxAge!, entries = o.eventLogMaxEntries ?? d.eventLogMaxEntries!
        guard age >= 1 else { throw ValidationError("eventLogMaxAge must be at least 1 s") }
        guard entries >= 0 else { throw ValidationError("eventLogMaxEntries must not be negative (0 turns the log off)") }
        return EventLogConfiguration(retention: EventLogRetention(maxAge: .milliseconds(Int64(age * 1000)), maxEntries: entries))
    }
}
