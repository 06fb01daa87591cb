import Foundation
import JWTKit
import MeridianCore

/// What a Meridian bearer token says: who joins, under which name, which
/// sessions, with which role, until when. Signed by the deployment's
/// identity service (or `meridian token` in development).
///
/// ```json
/// {"sub": "alice", "name": "Alice", "session": "city-*", "role": "editor",
///  "exp": 1790000000, "iat": 1789996400, "aud": "meridian", "iss": "https://id.example"}
/// ```
public struct AccessClaims: JWTPayload, Equatable {
    /// The participant id the holder gets in every session it joins.
    public var sub: SubjectClaim
    /// Display name; the join request's `name` is used when absent.
    public var name: String?
    /// A session id, or a pattern where `*` stands for any run of characters.
    public var session: String
    /// The most the holder may do: `owner`, `editor`, `viewer` or `dashboard`.
    public var role: TokenRole
    /// `exp`: when the token expires.
    public var exp: ExpirationClaim
    /// `nbf`: the time before which the token is not valid, if set.
    public var nbf: NotBeforeClaim?
    /// `iat`: when the token was issued, if set.
    public var iat: IssuedAtClaim?
    /// `aud`: the audiences the token is for, checked when the verifier has an audience.
    public var aud: AudienceClaim?
    /// `iss`: who issued the token, checked when the verifier has an issuer.
    public var iss: IssuerClaim?

    /// Claims for participant `subject` in `session` (an id or a `*` pattern) with `role`, valid
    /// until `expires`; `iat`, `aud` and `iss` only when given, no `nbf`.
    public init(
        subject: String, name: String?, session: String, role: TokenRole, expires: Date,
        issuedAt: Date? = nil, audience: String? = nil, issuer: String? = nil
    ) {
        sub = SubjectClaim(value: subject)
        self.name = name
        self.session = session
        self.role = role
        exp = ExpirationClaim(value: expires)
        iat = issuedAt.map { IssuedAtClaim(value: $0) }
        aud = audience.map { AudienceClaim(value: $0) }
        iss = issuer.map { IssuerClaim(value: $0) }
    }

    /// Verification is done by ``TokenVerifier``, against the server's clock
    /// and configured audience and issuer; this requirement is not used.
    public func verify(using algorithm: some JWTAlgorithm) async throws {}
}

/// The role a token grants. `dashboard` is a hidden, read-only watcher.
public enum TokenRole: String, Codable, Sendable, CaseIterable {
    /// `owner`, `editor` and `viewer` join with that session role at most; `dashboard` joins hidden,
    /// read-only (as a viewer).
    case owner, editor, viewer, dashboard

    /// The session role a holder joins with at most.
    public var sessionRole: Role {
        switch self {
        case .owner: .owner
        case .editor: .editor
        case .viewer, .dashboard: .viewer
        }
    }
}
