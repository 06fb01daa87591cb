import Logging
import MeridianTransport

/// A Meridian server: sessions hosted on a libwebsockets transport.
public final class MeridianServer: Sendable {
    public let configuration: ServerConfiguration
    private let transport: WebSocketServer
    private let storage = StorageSlot()
    private let eventLog = EventLog()
    private let logger: Logger
    private let metrics = ServerMetrics()

    public init(configuration: ServerConfiguration, logger: Logger = Logger(label: "meridian")) {
        self.configuration = configuration
        self.logger = logger
        self.transport = WebSocketServer(
            configuration: configuration.transport,
            handler: Hub(configuration: configuration, logger: logger, storage: storage, eventLog: eventLog, metrics: metrics))
    }

    /// Opens the session store, then starts serving; returns the bound port.
    /// Throws a ``StorageError`` naming the path and cause when the store
    /// cannot be opened (unwritable directory, a file that is not a database).
    public func start() throws -> Int {
        if case .none = configuration.authentication, !Authentication.isLoopback(configuration.transport.host) {
            throw ConfigurationError(
                "authentication none accepts anyone as any role: it binds only to loopback (127.0.0.1, ::1), not \(configuration.transport.host)")
        }
        let metrics = self.metrics
        try storage.open(configuration.storage, onBatch: { metrics.record($0) })
        do {
            try eventLog.open(configuration.eventLog, storage: configuration.storage, logger: logger)
            return try transport.start()
        } catch {
            eventLog.close()
            storage.close()
            throw error
        }
    }

    /// Graceful stop: refuse new connections, close every connection with
    /// 1001, and return when the service thread has ended.
    public func stop() {
        transport.stop()
        eventLog.close()
        storage.close()
    }
}

/// A configuration the server refuses to run with.
public struct ConfigurationError: Error, CustomStringConvertible, Sendable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
