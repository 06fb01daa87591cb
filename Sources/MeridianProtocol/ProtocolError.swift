import MeridianCore

/// Why a request could not be decoded. Sent to the client as an `error`
/// message naming the request's `ref`.
public struct ProtocolError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The code the client's `error` carries (SPEC §9), e.g. `invalid_field`.
    public let code: SessionError.Code
    /// The human-readable reason, sent as the `error`'s `message`.
    public let message: String
    /// Dotted path of the offending field in the request as sent (e.g. `annotation.coordinate.latitude`); nil when no one field is to blame.
    public let field: String?
    /// The `ref` of the request, when it could be read.
    public internal(set) var ref: RequestRef = .null

    /// An error with `code`, `message` and the field to blame, if any; its `ref` is `null` until the request's is read.
    public init(_ code: SessionError.Code, _ message: String, field: String? = nil) {
        self.code = code
        self.message = message
        self.field = field
    }

    /// `code: message`, for logs.
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
