import Logging
import MeridianTransport

/// A Meridian server: sessions hosted on a libwebsockets transport.
public final class MeridianServer: Sendable {
    public let configuration: ServerConfiguration
    private let transport: WebSocketServer

    public init(configuration: ServerConfiguration, logger: Logger = Logger(label: "meridian")) {
        self.configuration = configuration
        self.transport = WebSocketServer(configuration: configuration.transport, handler: Hub(configuration: configuration, logger: logger))
    }

    /// Starts serving; returns the bound port.
    public func start() throws -> Int {
        try transport.start()
    }

    /// Graceful stop: refuse new connections, close every connection with
    /// 1001, and return when the service thread has ended.
    public func stop() {
        transport.stop()
    }
}
