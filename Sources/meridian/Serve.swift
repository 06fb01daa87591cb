import ArgumentParser
import Foundation
import Logging
import MeridianCore
import MeridianDashboard
import MeridianServer
import MeridianStorage
import MeridianTransport
import MeridianTransportCore
import ServiceLifecycle

/// `meridian serve`: runs the server until SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Serve map sessions over WebSocket (protocol meridian.v1) and HTTP.")

    @Option(help: "JSON config file (keys as in --print-config). Precedence: flags > MERIDIAN_* environment > file > defaults.")
    var config: String?
    @Flag(help: "Print the effective configuration as JSON and exit.") var printConfig = false
    @Option(help: "Address to bind (default 127.0.0.1).") var host: String?
    @Option(help: "Port to bind; 0 picks a free one (printed on start). Default 8080.") var port: Int?
    @Option(help: "Directory of the session store (SQLite, WAL); without it sessions live in memory only.")
    var dataDir: String?
    @Option(help: "Seconds a session with no members stays loaded (default 300).") var idleUnload: Double?
    @Option(help: "Most sessions loaded at once (default 10000).") var maxSessions: Int?
    @Option(help: "Drag conflict policy of new sessions: exclusive, priority or last-writer-wins.")
    var dragPolicy: String?
    @Option(help: "Seconds without a move before a drag lease expires (default 10).") var leaseTimeout: Double?
    @Option(help: "Discrete events kept per session for resume (default 4096).") var historySize: Int?
    @Option(help: "Largest accepted message, in bytes (larger closes with 1009; default 65536).") var maxMessageBytes: Int?
    @Option(help: "Outgoing bytes queued for a client before it counts as behind.") var queueHighWater: Int?
    @Option(help: "Outgoing bytes queued for a client before it is closed at once (4008).") var queueHardLimit: Int?
    @Option(help: "Outgoing bytes queued for a client above which superseded transient events are dropped (conflated; default 16384).")
    var conflateAbove: Int?
    @Option(help: "Seconds a client may stay behind before it is closed (4008).") var slowConsumerGrace: Double?
    @Option(help: "Seconds a closing client may take to read what is ahead of its close frame.")
    var closeTimeout: Int?
    @Option(help: "Seconds between keepalive pings.") var pingInterval: Int?
    @Option(help: "Seconds without a pong before the connection is dropped.") var idleTimeout: Int?
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel: String?
    @Option(help: "Raster tile URL template ({z}/{x}/{y}) under the dashboard's map; none draws a graticule.")
    var dashboardTiles: String?
    @Option(help: "Serve the dashboard from this directory instead of the built-in files.")
    var dashboardDirectory: String?
    @Option(help: "Leaflet's files (Debian libjs-leaflet), served at /vendor/leaflet/ (default /usr/share/javascript/leaflet).")
    var leafletDirectory: String?
    @Option(help: "jwt (default): joins need a bearer token; none: anyone joins as any role, loopback only, for development.")
    var auth: String?
    @Option(help: "File holding the HS256 secret (at least 32 bytes) tokens are signed with.") var jwtSecretFile: String?
    @Option(help: "PEM file of the ES256 (P-256) or RS256 public keys tokens are signed with; several keys for rotation.")
    var jwtPublicKeyFile: String?
    @Option(help: "When set, tokens must carry this audience (aud).") var jwtAudience: String?
    @Option(help: "When set, tokens must come from this issuer (iss).") var jwtIssuer: String?
    @Option(help: "Requests per second per connection (token bucket; default 200).") var rateLimit: Double?
    @Option(help: "Requests a connection may send at once above the rate (default 400).") var rateBurst: Int?
    @Option(help: "Most participants per session (default 5000).") var maxParticipants: Int?
    @Option(help: "Most annotations per session (default 100000).") var maxAnnotations: Int?
    @Option(help: "Most coordinates per polyline or polygon ring (default 10000).") var maxCoordinates: Int?
    @Option(help: "Most bytes of an annotation's metadata (default 4096).") var maxMetadataBytes: Int?
    @Option(help: "Longest annotation title or subtitle, in characters (default 256).") var maxTitleLength: Int?
    @Option(help: "PEM certificate (chain) file; with --tls-key the port serves only wss:// and https://.")
    var tlsCert: String?
    @Option(help: "PEM private key of --tls-cert.") var tlsKey: String?
    @Option(help: "Origin a browser may connect from (repeat, or comma-separate; \"*\" allows any). Same-origin and Origin-less clients are always allowed; others get 403.")
    var allowedOrigins: [String] = []
    @Option(help: "Most WebSocket connections at once, handshakes included (over it: HTTP 503; default 100000).")
    var maxConnections: Int?
    @Option(help: "Most WebSocket connections at once from one IP address (over it: HTTP 429; default 1000).")
    var maxConnectionsPerIp: Int?
    @Option(help: "Seconds a new connection has to complete its HTTP request or upgrade (default 10).")
    var handshakeTimeout: Double?
    @Option(help: "Seconds each session's event log keeps an entry (default 604800, a week).") var eventLogMaxAge: Double?
    @Option(help: "Entries each session's event log keeps at most, newest first (default 10000; 0 turns the log off).")
    var eventLogMaxEntries: Int?
    @Option(help: "Above this many participants a session announces joins and leaves together, in one presence event per tick (default 100).")
    var presenceBatchAbove: Int?
    @Option(help: "Bytes of frames shared by many connections (the annotation lists of welcomes into big sessions) exempt from the per-connection queue limits (default 268435456).")
    var sharedFrameBudget: Int?
    @Option(help: "Event loop of the transport: libev (epoll; default) or poll (libwebsockets' own poll() loop).")
    var eventLoop: String?

    var flags: ServeOptions {
        ServeOptions(
            host: host, port: port, dataDir: dataDir, idleUnload: idleUnload, maxSessions: maxSessions,
            dragPolicy: dragPolicy, leaseTimeout: leaseTimeout, historySize: historySize, maxMessageBytes: maxMessageBytes,
            queueHighWater: queueHighWater, queueHardLimit: queueHardLimit, conflateAbove: conflateAbove, slowConsumerGrace: slowConsumerGrace,
            closeTimeout: closeTimeout, pingInterval: pingInterval, idleTimeout: idleTimeout, logLevel: logLevel,
            dashboardTiles: dashboardTiles, dashboardDirectory: dashboardDirectory, leafletDirectory: leafletDirectory,
            auth: auth, jwtSecretFile: jwtSecretFile, jwtPublicKeyFile: jwtPublicKeyFile, jwtAudience: jwtAudience, jwtIssuer: jwtIssuer,
            rateLimit: rateLimit, rateBurst: rateBurst, maxParticipants: maxParticipants, maxAnnotations: maxAnnotations,
            maxCoordinates: maxCoordinates, maxMetadataBytes: maxMetadataBytes, maxTitleLength: maxTitleLength,
            tlsCert: tlsCert, tlsKey: tlsKey,
            allowedOrigins: allowedOrigins.isEmpty ? nil : allowedOrigins.flatMap(ServeOptions.commaSeparated),
            maxConnections: maxConnections, maxConnectionsPerIp: maxConnectionsPerIp, handshakeTimeout: handshakeTimeout,
            eventLogMaxAge: eventLogMaxAge, eventLogMaxEntries: eventLogMaxEntries,
            presenceBatchAbove: presenceBatchAbove, sharedFrameBudget: sharedFrameBudget,
            eventLoop: eventLoop)
    }

    /// flags > environment > file > defaults.
    func effectiveOptions() throws -> ServeOptions {
        let file = try config.map(ServeOptions.file) ?? ServeOptions()
        let env = try ServeOptions.environment(ProcessInfo.processInfo.environment)
        return try flags.over(env.over(file.over(.defaults)))
    }

    func run() async throws {
        let o: ServeOptions
        do { o = try effectiveOptions() } catch let error as ConfigError { throw ValidationError(error.description) }
        let settings = try ResolvedSettings(o)
        if printConfig {
            print(try o.json())
            return
        }
        let level = settings.logLevel
        // Lines are written to stderr by a thread of their own: logging never waits on the
        // service thread. What is queued is written before the process exits.
        let logWriter = LogWriter()
        LoggingSystem.bootstrap { label in
            var handler = BackgroundLogHandler(label: label, writer: logWriter)
            handler.logLevel = level
            return handler
        }
        defer { logWriter.flush() }
        var configuration = settings.server
        configuration.logWriter = logWriter
        DescriptorLimit.raise(for: configuration.transport.maxConnections, logger: Logger(label: "meridian"))
        do {
            configuration.authentication = try await Self.authentication(o)
        } catch let error as ConfigError {
            throw ValidationError(error.description)
        }
        let dashboard = try Dashboard(configuration: settings.dashboard)
        configuration.http = { request in dashboard.response(to: request) }
        let server = MeridianServer(configuration: configuration)
        let transport = configuration.transport
        let bound: Int
        do {
            bound = try server.start()
        } catch let error as StorageError {
            Logger(label: "meridian").critical("cannot start: \(error.message)")
            throw ExitCode(3)
        } catch let error as TransportError {
            Logger(label: "meridian").critical("cannot start: \(error)")
            throw ExitCode(4)
        } catch let error as ConfigurationError {
            throw ValidationError(error.description)
        }
        if case .none = configuration.authentication {
            Logger(label: "meridian").warning(
                "AUTHENTICATION IS OFF (--auth none): anyone can join any session as any role. For development only; bound to loopback.")
        }
        // Tests and scripts read this line to learn the port. The service prints it once the
        // group handles SIGTERM and SIGINT: a signal sent as soon as the line shows is graceful.
        let scheme = transport.usesTLS ? "https" : "http"
        let listening = "meridian listening on \(scheme)://\(transport.host):\(bound) (WebSocket subprotocol \(transport.subprotocol))"

        let logger = Logger(label: "meridian")
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(
            services: [.init(service: MeridianService(server: server, announcement: listening), successTerminationBehavior: .gracefullyShutdownGroup)],
            gracefulShutdownSignals: [.sigterm, .sigint],
            logger: logger))
        try await group.run()
        Logger(label: "meridian").info("stopped")
    }
}


