import Foundation
import MeridianAuth
import MeridianCore
import MeridianServer
import MeridianTesting

let authSecret = "meridian-test-secret-0123456789abcdef"

/// The configuration of a server that checks HS256 tokens signed with ``authSecret`` (no clock leeway).
func tokenAuthentication() async throws -> Authentication {
    .tokens(try await TokenVerifier.make(keys: [.secret(authSecret)], leeway: 0))
}

/// A server that checks HS256 tokens signed with ``authSecret`` (no clock leeway).
func tokenServer(_ configure: @escaping (inout ServerConfiguration) -> Void = { _ in }) async throws -> TestServer {
    let authentication = try await tokenAuthentication()
    return try TestServer {
        $0.authentication = authentication
        configure(&$0)
    }
}

/// Hubs in memory that check HS256 tokens signed with ``authSecret`` (no clock leeway).
func tokenMemoryServer() async throws -> MemoryServer {
    let authentication = try await tokenAuthentication()
    return try MemoryServer { $0.authentication = authentication }
}

func token(
    _ sub: String, role: TokenRole, session: String = "auth-*", name: String? = nil, ttl: TimeInterval = 600, secret: String = authSecret
) async throws -> String {
    let claims = AccessClaims(subject: sub, name: name, session: session, role: role, expires: Date().addingTimeInterval(ttl))
    return try await TokenMinter(key: .secret(secret)).sign(claims)
}

/// What the socket client and the in-memory client share for a join with a token.
protocol TokenJoining: AnyObject {
    var welcome: JSONValue { get set }
    func request(_ type: String, _ fields: [String: JSONValue]) throws -> JSONValue
}

extension TestClient: TokenJoining {}
extension MemoryClient: TokenJoining {}

extension TokenJoining {
    /// Joins with a token; returns the answer (welcome or error).
    @discardableResult
    func join(_ session: String, token: String, _ extra: [String: JSONValue] = [:]) throws -> JSONValue {
        var fields = extra
        fields["session"] = .string(session)
        fields["token"] = .string(token)
        let answer = try request("join", fields)
        if answer["type"]?.string == "welcome" { welcome = answer }
        return answer
    }
}
