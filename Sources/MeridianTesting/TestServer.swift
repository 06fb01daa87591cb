import Foundation
import Logging
import MeridianServer

/// A real Meridian server for tests: in this process, on an ephemeral port,
/// logging only critical messages. Stop it with ``stop()``.
public final class TestServer: Sendable {
    /// The server itself, for what a test asks of it beyond its port.
    public let server: MeridianServer
    /// The port the server bound.
    public let port: Int

    /// Starts a server on a port the system picks (on 127.0.0.1 unless `configure` says otherwise), with the default configuration as `configure` adjusts it; throws if it cannot start.
    public init(_ configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        var configuration = ServerConfiguration()
        configuration.transport.port = 0
        configure(&configuration)
        var logger = Logger(label: "meridian.test")
        logger.logLevel = .critical
        server = MeridianServer(configuration: configuration, logger: logger)
        port = try server.start()
    }

    /// Stops the server gracefully (connections closed with 1001) and returns once its threads have ended.
    public func stop() { server.stop() }

    /// The `meridian` executable built alongside the tests: the one next to the test binary
    /// (so a `--build-path .build/tsan` run starts the ThreadSanitizer build of the server),
    /// else `.build/debug/meridian`.
    public static var executable: URL {
        let running = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        let beside = running.deletingLastPathComponent().appendingPathComponent("meridian")
        if FileManager.default.isExecutableFile(atPath: beside.path) { return beside }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(".build/debug/meridian")
    }
}
