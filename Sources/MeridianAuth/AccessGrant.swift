import Foundation
import MeridianCore

/// A verified token: what its holder may join, as whom, until when.
public struct AccessGrant: Sendable, Equatable {
    /// The participant id the holder joins as.
    public var participant: ParticipantID
    /// The display name from the token's `name` claim, if it has one.
    public var name: String?
    /// The `session` claim: an id or a `*` pattern.
    public var sessions: String
    /// The most the holder may do (the `role` claim).
    public var role: TokenRole
    /// When the token expires (its `exp`).
    public var expires: Date

    /// A grant with these values, as ``TokenVerifier`` makes it from a token's claims.
    public init(participant: ParticipantID, name: String?, sessions: String, role: TokenRole, expires: Date) {
        self.participant = participant
        self.name = name
        self.sessions = sessions
        self.role = role
        self.expires = expires
    }

    /// Whether the token lets its holder into `session`.
    public func allows(session: String) -> Bool { SessionPattern.matches(sessions, session) }

    /// Whether the holder may see every session at once (the overview, the session list):
    /// an owner or dashboard token for `*`.
    public var watchesEverySession: Bool { sessions == "*" && (role == .owner || role == .dashboard) }
}

/// Why a token was not accepted. `code` is the protocol's error code.
public struct AuthError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The protocol's error code for a refused token (SPEC §9).
    public enum Code: String, Sendable {
        /// Missing, malformed, badly signed, for another audience or issuer, or not valid yet.
        case unauthorized
        /// Well signed but past its `exp`: get a new token.
        case tokenExpired = "token_expired"
    }
    /// Which refusal: `unauthorized` or `token_expired`.
    public var code: Code
    /// What was wrong with the token, in words (the error's `message`).
    public var message: String
    /// A refusal with `code`, explained by `message`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
    /// The code and the message, as `code: message`.
    public var description: String { "\(code.rawValue): \(message)" }
}
