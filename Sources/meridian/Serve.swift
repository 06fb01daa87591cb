import ArgumentParser
import Dispatch
import Foundation
import Logging
import MeridianCore
import MeridianServer
import MeridianTransport

/// `meridian serve`: runs the server until SIGTERM or SIGINT.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Serve map sessions over WebSocket (protocol meridian.v1) and HTTP.")

    @Option(help: "Address to bind.") var host = "127.0.0.1"
    @Option(help: "Port to bind; 0 picks a free one (printed on start).") var port = 8080
    @Option(help: "Drag conflict policy of new sessions: exclusive, priority or last-writer-wins.")
    var dragPolicy: DragPolicy = .exclusive
    @Option(help: "Seconds without a move before a drag lease expires.") var leaseTimeout = 10.0
    @Option(help: "Discrete events kept per session for resume.") var historySize = 4_096
    @Option(help: "Largest accepted message, in bytes (larger closes with 1009).") var maxMessageBytes = 65_536
    @Option(help: "Outgoing bytes queued for a client before it counts as behind.") var queueHighWater = 1 << 20
    @Option(help: "Outgoing bytes queued for a client before it is closed at once (4008).") var queueHardLimit = 8 << 20
    @Option(help: "Seconds a client may stay behind before it is closed (4008).") var slowConsumerGrace = 2.0
    @Option(help: "Seconds a closing client may take to read what is ahead of its close frame.")
    var closeTimeout = 30
    @Option(help: "Seconds between keepalive pings.") var pingInterval = 30
    @Option(help: "Seconds without a pong before the connection is dropped.") var idleTimeout = 75
    @Option(help: "Directory of the session store (SQLite, WAL); without it sessions live in memory only.")
    var dataDir: String?
    @Option(help: "Seconds a session with no members stays loaded.") var idleUnload = 300.0
    @Option(help: "Most sessions loaded at once.") var maxSessions = 10_000
    @Option(help: "Log level: trace, debug, info, notice, warning, error, critical.") var logLevel: Logger.Level = .info

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port must be within 0...65535") }
        guard leaseTimeout >= 0.1 else { throw ValidationError("--lease-timeout must be at least 0.1 s") }
        guard historySize >= 1 else { throw ValidationError("--history-size must be at least 1") }
        guard maxMessageBytes >= 1_024 else { throw ValidationError("--max-message-bytes must be at least 1024") }
        guard queueHighWater > 0, queueHardLimit > queueHighWater else {
            throw ValidationError("--queue-hard-limit must exceed --queue-high-water")
        }
        guard maxSessions >= 1 else { throw ValidationError("--max-sessions must be at least 1") }
        guard idleUnload >= 0 else { throw ValidationError("--idle-unload must not be negative") }
        guard closeTimeout >= 1 else { throw ValidationError("--close-timeout must be at least 1 s") }
        guard idleTimeout > pingInterval, pingInterval > 0 else { throw ValidationError("--idle-timeout must exceed --ping-interval") }
    }

    func run() throws {
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        var transport = TransportConfiguration()
        transport.host = host
        transport.port = port
        transport.maxMessageBytes = maxMessageBytes
        transport.queueHighWaterBytes = queueHighWater
        transport.queueHardLimitBytes = queueHardLimit
        transport.slowConsumerGrace = .milliseconds(Int(slowConsumerGrace * 1000))
        transport.closeTimeout = .seconds(closeTimeout)
        transport.pingInterval = .seconds(pingInterval)
        transport.idleTimeout = .seconds(idleTimeout)
        var defaults = SessionSettings()
        defaults.dragPolicy = dragPolicy
        defaults.leaseTimeout = .milliseconds(Int(leaseTimeout * 1000))
        var configuration = ServerConfiguration(transport: transport, sessionDefaults: defaults, historySize: historySize)
        configuration.storage.dataDirectory = dataDir
        configuration.storage.idleUnloadAfter = .milliseconds(Int(idleUnload * 1000))
        configuration.storage.maxLoadedSessions = maxSessions
        let server = MeridianServer(configuration: configuration)

        let bound = try server.start()
        // Tests and scripts read this line to learn the port.
        print("meridian listening on http://\(host):\(bound) (WebSocket subprotocol \(transport.subprotocol))")
        fflush(nil)

        let stopped = DispatchSemaphore(value: 0)
        let signals = [SIGTERM, SIGINT].map { sig in
            signal(sig, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler { @Sendable in
                server.stop()
                stopped.signal()
            }
            source.resume()
            return source
        }
        stopped.wait()
        _ = signals
        Logger(label: "meridian").info("stopped")
    }
}

extension DragPolicy: ExpressibleByArgument {}
extension Logger.Level: @retroactive ExpressibleByArgument {}
