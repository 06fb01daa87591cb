import Foundation
import MeridianCore

/// A verified token: what its holder may join, as whom, until when.
public struct AccessGrant: Sendable, Equatable {
    /// The participant id the holder joins as.
    public var participant: ParticipantID
    public var name: String?
    /// The `session` claim: an id or a `*` pattern.
    public var sessions: String
    public var role: TokenRole
    public var expires: Date

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
    public enum Code: String, Sendable {
        /// Missing, malformed, badly signed, for another audience or issuer, or not valid yet.
        case unauthorized
        /// Well signed but past its `exp`: get a new token.
        case tokenExpired = "token_expired"
    }
    public var code: Code
    public var message: String
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
    public var description: String { "\(code.rawValue): \(message)" }
}
