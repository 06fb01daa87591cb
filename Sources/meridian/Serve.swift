import ArgumentParser
import Foundation
import Logging
import MeridianCore
import MeridianDashboard
import MeridianServer
import MeridianSettings
import MeridianStorage
import MeridianTransport
import MeridianTransportCore
import ServiceLifecycle

/// `meridian serve`: runs the server until SIGTERM or SIGINT.
struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Serve map sessions over WebSocket (protocol meridian.v1) and HTTP.")

    @Option(help: "JSON config file: an object whose keys are the settings' keys (as --print-config prints them).")
    var config: String?
    @Flag(help: "Print the effective settings as JSON and exit.") var printConfig = false
    /// The setting flags, parsed by the declared table (`ServeSettings`) rather than by
    /// one property per flag here: the table also gives each its key and variable.
    @Argument(
        parsing: .allUnrecognized,
        help: ArgumentHelp(
            "Settings: each a flag, a key of the --config file and a MERIDIAN_* environment variable. Flags win over the environment, which wins over the file, which wins over the defaults.",
            discussion: ServeSettings.help(),
            valueName: "setting"))
    var settingFlags: [String] = []

    func validate() throws {
        do { try EffectiveSettings.checkFlags(settingFlags) } catch let error as SettingError { throw ValidationError(error.description) }
    }

    func run() async throws {
        let o: EffectiveSettings
        var settings: ResolvedSettings
        do {
            o = try await EffectiveSettings.resolve(
                arguments: settingFlags, environment: ProcessInfo.processInfo.environment, configFile: config)
            settings = try ResolvedSettings(o)
        } catch let error as SettingError {
            throw ValidationError(error.description)
        }
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
        do {
            try settings.openStore()
        } catch {
            Logger(label: "meridian").critical("cannot start: \(error.message)")
            throw ExitCode(3)
        }
        var configuration = settings.server
        configuration.logWriter = logWriter
        DescriptorLimit.fit(to: configuration.transport.maxConnections, logger: Logger(label: "meridian"))
        do {
            configuration.authentication = try await Self.authentication(o)
        } catch let error as SettingError {
            throw ValidationError(error.description)
        }
        let dashboard = try Dashboard(configuration: settings.dashboard)
        for missing in dashboard.missingLibraries {
            Logger(label: "meridian").warning("\(missing)")
        }
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
        if transport.writeBatch > 1, !transport.usesTLS, let reason = WebSocketServer.writeBatchingUnavailable() {
            Logger(label: "meridian").notice("each write is made on its own (\(reason))")
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


