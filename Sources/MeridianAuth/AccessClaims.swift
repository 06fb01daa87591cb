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
    public var exp: ExpirationClaim
    public var nbf: NotBeforeClaim?
    public var iat: IssuedAtClaim?
    public var aud: AudienceClaim?
    public var iss: IssuerClaim?

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
