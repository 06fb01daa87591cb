import MeridianCore

/// Why a request could not be decoded. Sent to the client as an `error`
/// message naming the request's `ref`.
public struct ProtocolError: Error, Hashable, Sendable, CustomStringConvertible {
    public let code: SessionError.Code
    public let message: String
    public let field: String?
    /// The `ref` of the request, when it could be read.
    public internal(set) var ref: RequestRef = .null

    public init(_ code: SessionError.Code, _ message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }

    public var description: String { "\(code.rawValue): \(message)" }

    static func invalid(_ field: String, _ message: String) -> ProtocolError {
        ProtocolError(.invalidField, "\(field): \(message)", field: field)
    }
}

extension SessionError.Code {
    /// The frame is not a JSON object.
    public static let invalidMessage = Self(rawValue: "invalid_message")
    /// `type` names no request of Protocol v1.
    public static let unknownType = Self(rawValue: "unknown_type")
    /// A session command arrived before `join`.
    public static let notJoined = Self(rawValue: "not_joined")
    /// `join` arrived on a connection that already joined.
    public static let alreadyJoined = Self(rawValue: "already_joined")
    /// No usable bearer token: missing, malformed, badly signed, for another
    /// audience or issuer, or not valid yet.
    public static let unauthorized = Self(rawValue: "unauthorized")
    /// The bearer token is past its `exp`: get a new one.
    public static let tokenExpired = Self(rawValue: "token_expired")
    /// Too many requests: the answer's `retryAfterMs` says when to try again.
    public static let rateLimited = Self(rawValue: "rate_limited")
}
