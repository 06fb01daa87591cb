import MeridianCore
import MeridianTesting

extension TestServer {
    func client() throws -> TestClient {
        try TestClient(port: port)
    }

    /// A client joined to `session`, its welcome read.
    func joined(_ session: String, name: String, role: String = "editor", extra: [String: JSONValue] = [:]) throws -> TestClient {
        let c = try client()
        try c.join(session, name: name, role: role, extra: extra)
        return c
    }
}
