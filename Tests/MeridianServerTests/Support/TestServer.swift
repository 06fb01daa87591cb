import Logging
import MeridianCore
import MeridianServer
import MeridianTransport

/// A real server on an ephemeral port, stopped by `stop()`.
final class TestServer: Sendable {
    let server: MeridianServer
    let port: Int

    init(_ configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        var configuration = ServerConfiguration()
        configuration.transport.port = 0
        configure(&configuration)
        var logger = Logger(label: "meridian.test")
        logger.logLevel = .critical
        server = MeridianServer(configuration: configuration, logger: logger)
        port = try server.start()
    }

    func client() throws -> TestClient {
        try TestClient(port: port)
    }

    /// A client joined to `session`, its welcome read.
    func joined(_ session: String, name: String, role: String = "editor", extra: [String: JSONValue] = [:]) throws -> TestClient {
        let c = try client()
        try c.join(session, name: name, role: role, extra: extra)
        return c
    }

    func stop() { server.stop() }
}
