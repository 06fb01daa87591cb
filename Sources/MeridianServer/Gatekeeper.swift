import Foundation
import MeridianAPI
import MeridianAuth
import MeridianCore
import MeridianProtocol
import MeridianTransport

/// Why a join or refresh was refused.
struct AuthRefusal: Error {
    var code: SessionError.Code
    var message: String
    var field: String?
}

/// Who a connection or an HTTP request is, and what it may do: the bearer tokens of handshakes,
/// joins, refreshes, the overview and the HTTP API checked against the server's
/// ``Authentication``, with no I/O. Each hub has its own, on its service thread: it keeps the
/// grant of the upgrade it screened last, for the connection that opens next.
final class Gatekeeper {
    let authentication: Authentication
    private let metrics: HubMetrics
    /// Grants of tokens verified before (nil without tokens).
    private let tokens: TokenCache?
    /// The token and grant of the upgrade ``screen(_:)`` accepted last, until its `didOpen`.
    private var screened: (token: String, grant: AccessGrant)?
    /// When connections' token expiries are next looked at.
    private var nextExpiryCheck = Date.distantPast

    init(_ authentication: Authentication, metrics: HubMetrics) {
        self.authentication = authentication
        self.metrics = metrics
        if case .tokens(let verifier) = authentication { tokens = TokenCache(verifier: verifier) } else { tokens = nil }
    }

    /// The core join request a `join` amounts to: under tokens, the token
    /// names the participant and caps the role; without, the request says all.
    func resolveJoin(
        _ p: JoinParameters, session: String, resume: ResumePoint?, handshakeGrant: AccessGrant?
    ) -> Result<(JoinRequest, AccessGrant?), AuthRefusal> {
        guard case .tokens(let verifier) = authentication else {
            guard let name = p.name else { return .failure(AuthRefusal(code: .invalidField, message: "name: required", field: "name")) }
            guard let role = p.role else {
                return .failure(AuthRefusal(code: .invalidField, message: "role: required (owner, editor or viewer)", field: "role"))
            }
            return .success((JoinRequest(
                name: name, role: role, hidden: p.hidden ?? false, color: p.color, previous: p.previousParticipant, previousEpoch: resume?.epoch), nil))
        }
        let grant: AccessGrant
        switch bearer(p.token, handshakeGrant: handshakeGrant, verifier: verifier, request: "join") {
        case .success(let g): grant = g
        case .failure(let refusal): return .failure(refusal)
        }
        guard grant.allows(session: session) else {
            return .failure(AuthRefusal(code: .forbidden, message: "the token does not allow session \(session) (it allows \(grant.sessions))", field: "session"))
        }
        let ceiling = grant.role.sessionRole
        let role = p.role ?? ceiling
        guard role.rank <= ceiling.rank else {
            return .failure(AuthRefusal(code: .forbidden, message: "the token grants at most \(ceiling.rawValue); cannot join as \(role.rawValue)", field: "role"))
        }
        let hidden: Bool
        switch (grant.role, p.hidden) {
        case (.dashboard, false?):
            return .failure(AuthRefusal(code: .forbidden, message: "a dashboard token joins hidden only", field: "hidden"))
        case (.dashboard, _): hidden = true
        case (.owner, let h): hidden = h ?? false
        case (_, true?):
            return .failure(AuthRefusal(code: .forbidden, message: "only owner and dashboard tokens may join hidden", field: "hidden"))
        case (_, _): hidden = false
        }
        let name = grant.name ?? p.name ?? grant.participant
        // The token's subject is the participant on every connection: `previousParticipant` names
        // nobody else's history (it would hand the joiner another participant's undo steps).
        return .success((JoinRequest(name: name, role: role, hidden: hidden, color: p.color, participant: grant.participant), grant))
    }

    /// The grant of a request's own token, else of the connection's handshake token (verified
    /// when the connection opened; only its expiry is checked again).
    private func bearer(_ token: String?, handshakeGrant: AccessGrant?, verifier: TokenVerifier, request: String) -> Result<AccessGrant, AuthRefusal> {
        let result: Result<AccessGrant, AuthError>
        if let token {
            result = verified(token, by: verifier)
        } else if let grant = handshakeGrant {
            result = verifier.recheck(grant)
        } else {
            return .failure(AuthRefusal(
                code: .unauthorized,
                message: "\(request) needs a bearer token: the request's token field, an Authorization: Bearer header or ?access_token= on the WebSocket URL",
                field: "token"))
        }
        return result.mapError { AuthRefusal(code: Self.code($0), message: $0.message, field: "token") }
    }

    /// A token's grant: an asymmetric signature is verified once per token on the service
    /// thread, then its grant is taken from the cache (its expiry checked each time).
    func verified(_ token: String, by verifier: TokenVerifier) -> Result<AccessGrant, AuthError> {
        tokens?.verify(token) ?? verifier.verify(token)
    }

    /// `token.refresh` of a member joined to `session` with `current`: a new token for the same
    /// participant, still allowing the session with the same role, whose grant replaces it.
    func refresh(_ token: String, session: String, current: AccessGrant?, handshakeGrant: AccessGrant?) -> Result<AccessGrant, AuthRefusal> {
        guard case .tokens(let verifier) = authentication else {
            return .failure(AuthRefusal(code: .invalidField, message: "this server does not check tokens", field: "token"))
        }
        guard let current else { return .failure(AuthRefusal(code: .notJoined, message: "token.refresh needs a joined session")) }
        switch bearer(token, handshakeGrant: handshakeGrant, verifier: verifier, request: "token.refresh") {
        case .failure(let refusal):
            return .failure(refusal)
        case .success(let grant):
            guard grant.participant == current.participant else {
                return .failure(AuthRefusal(code: .forbidden, message: "the new token is for \(grant.participant), not \(current.participant)", field: "token"))
            }
            guard grant.role == current.role, grant.allows(session: session) else {
                return .failure(AuthRefusal(code: .forbidden, message: "the new token must grant the same role in session \(session)", field: "token"))
            }
            return .success(grant)
        }
    }

    /// Whether `grant` expired unrefreshed at `now` (never without tokens).
    func hasExpired(_ grant: AccessGrant, at now: Date) -> Bool {
        guard case .tokens(let verifier) = authentication, case .failure = verifier.recheck(grant, at: now) else { return false }
        return true
    }

    /// The connections whose token expired unrefreshed, with their grants: looked at once a
    /// second (none in between, and none without tokens).
    func expired(among connections: [ConnectionID: ConnectionState], at now: Date) -> [(ConnectionID, AccessGrant)] {
        guard case .tokens = authentication, now >= nextExpiryCheck else { return [] }
        nextExpiryCheck = now.addingTimeInterval(1)
        return connections.compactMap { id, state in state.grant.flatMap { hasExpired($0, at: now) ? (id, $0) : nil } }
    }

    /// Answers a WebSocket upgrade: a token in the handshake must verify. The grant is kept
    /// for `didOpen`, which lws calls next for the same request.
    func screen(_ handshake: Handshake) -> HandshakeVerdict {
        screened = nil
        guard case .tokens(let verifier) = authentication, let token = Self.token(in: handshake) else { return .accept }
        switch verified(token, by: verifier) {
        case .success(let grant):
            screened = (token, grant)
            return .accept
        case .failure(let error):
            metrics.error(Self.code(error))
            return .refuse(status: 401, reason: "\(error.code.rawValue): \(error.message)")
        }
    }

    /// The grant of an opened connection's handshake token, verified by `screen`.
    func handshakeGrant(_ handshake: Handshake) -> AccessGrant? {
        defer { screened = nil }
        guard case .tokens(let verifier) = authentication, let token = Self.token(in: handshake) else { return nil }
        if let screened, screened.token == token { return screened.grant }
        return try? verified(token, by: verifier).get()
    }

    /// The bearer token of a handshake: `Authorization: Bearer …`, else `?access_token=`.
    static func token(in handshake: Handshake) -> String? {
        if let header = handshake.authorization, header.lowercased().hasPrefix("bearer ") {
            return String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces)
        }
        return handshake.query["access_token"]
    }

    static func code(_ error: AuthError) -> SessionError.Code {
        switch error.code {
        case .unauthorized: .unauthorized
        case .tokenExpired: .tokenExpired
        }
    }
}

extension Role {
    /// Owner > editor > viewer.
    var rank: Int {
        switch self {
        case .viewer: 0
        case .editor: 1
        case .owner: 2
        }
    }
}

extension Gatekeeper {
    /// A request under /api/sessions, read and checked in this order (`APIRequest.decode` reads
    /// it): the path and the method (404, 405, whoever asks), the token (401), the request's form
    /// (400: id, query, body), the token's rights (403). Nil for any other path.
    func admitAPI(_ request: HTTPRequest) -> Result<APIRequest, APIDenial>? {
        guard let decoded = APIRequest.decode(method: request.method, path: request.path, query: request.query, body: request.body) else {
            return nil
        }
        // 404 and 405 depend on the path and the method alone: answered to anyone.
        if case .failure(let refusal) = decoded, refusal.status != 400 { return .failure(APIDenial(response: APIResponse.error(refusal))) }
        switch authenticateAPI(request) {
        case .failure(let denial):
            return .failure(denial)
        case .success(let grant):
            switch decoded {
            case .failure(let refusal): return .failure(APIDenial(response: APIResponse.error(refusal)))
            case .success(let api):
                if let grant, let denial = permitAPI(grant, request, api) { return .failure(APIDenial(response: denial)) }
                return .success(api)
            }
        }
    }

    /// Under tokens, the HTTP API needs `Authorization: Bearer`: reading a
    /// session needs a token allowing it; listing all sessions a `*` owner or
    /// dashboard token; creating, configuring or deleting one an owner token
    /// allowing it. Nil when the request may go on; else the 401 or 403.
    func authorizeAPI(_ request: HTTPRequest, _ api: APIRequest) -> HTTPResponse? {
        switch authenticateAPI(request) {
        case .failure(let denial): denial.response
        case .success(let grant): grant.flatMap { permitAPI($0, request, api) }
        }
    }

    /// The grant of the request's bearer token (nil when the server checks none), or the 401.
    func authenticateAPI(_ request: HTTPRequest) -> Result<AccessGrant?, APIDenial> {
        guard case .tokens(let verifier) = authentication else { return .success(nil) }
        guard let header = request.authorization, header.lowercased().hasPrefix("bearer ") else {
            return .failure(APIDenial(response: APIResponse.error(401, "unauthorized", "\(request.method) \(request.path.prefix(256)): the API needs an Authorization: Bearer token")))
        }
        switch verified(String(header.dropFirst(7)).trimmingCharacters(in: .whitespaces), by: verifier) {
        case .success(let grant): return .success(grant)
        case .failure(let error): return .failure(APIDenial(response: APIResponse.error(401, Self.code(error).rawValue, error.message)))
        }
    }

    /// The 403 when `grant` does not allow `api`, else nil.
    func permitAPI(_ grant: AccessGrant, _ request: HTTPRequest, _ api: APIRequest) -> HTTPResponse? {
        guard let id = api.session else {
            guard grant.watchesEverySession else {
                return APIResponse.error(403, "forbidden", "listing sessions needs an owner or dashboard token for session *")
            }
            return nil
        }
        guard grant.allows(session: id) else {
            return APIResponse.error(403, "forbidden", "the token does not allow session \(id)")
        }
        guard api.reads || grant.role == .owner else {
            return APIResponse.error(403, "forbidden", "\(request.method) needs an owner token; this one grants \(grant.role.rawValue)")
        }
        return nil
    }
}

/// A 401 of the API, as an error value.
struct APIDenial: Error {
    var response: HTTPResponse
}

extension Gatekeeper {
    /// The overview lists every session: under tokens it needs an owner or
    /// dashboard token for session `*`.
    func authorizeOverview(token: String?, handshakeGrant: AccessGrant?) -> AuthRefusal? {
        guard case .tokens(let verifier) = authentication else { return nil }
        switch bearer(token, handshakeGrant: handshakeGrant, verifier: verifier, request: "overview.watch") {
        case .failure(let refusal):
            return refusal
        case .success(let grant):
            guard grant.watchesEverySession else {
                return AuthRefusal(code: .forbidden, message: "overview.watch needs an owner or dashboard token for session *", field: "token")
            }
            return nil
        }
    }
}
