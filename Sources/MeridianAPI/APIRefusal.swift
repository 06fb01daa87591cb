/// Why the HTTP API refuses a request before doing anything: a status, an error code of
/// `Protocol/openapi.yaml`'s `Error` schema, a message naming the request and the reason,
/// the offending field, and for 405 the methods the path has (the `Allow` header).
public struct APIRefusal: Error, Hashable, Sendable, CustomStringConvertible {
    /// The HTTP status code (400, 404 or 405).
    public var status: Int
    /// The error code of the `Error` schema, e.g. `invalid_field`, `not_found`, `method_not_allowed`.
    public var code: String
    /// What a person reads: the request and why it is refused.
    public var message: String
    /// The offending field as a dotted path (e.g. `settings.styleURL`); nil when no one field is at fault.
    public var field: String?
    /// The methods the path answers (405 only), e.g. `["GET", "POST"]`.
    public var allow: [String]?

    /// A refusal with HTTP `status`, error `code` and `message`, and optionally the offending
    /// `field` and (for 405) the methods to `allow`.
    public init(_ status: Int, _ code: String, _ message: String, field: String? = nil, allow: [String]? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.field = field
        self.allow = allow
    }

    /// `STATUS code: message`, for logs.
    public var description: String { "\(status) \(code): \(message)" }

    /// 400 `invalid_field`.
    static func invalid(_ field: String, _ message: String) -> APIRefusal {
        APIRefusal(400, "invalid_field", message, field: field)
    }
}

/// A piece of client input quoted in an error message: at most 64 characters (cut on a
/// character boundary, marked with "…"). The JSON writer escapes what needs escaping.
func quoted(_ text: some StringProtocol) -> String {
    let cut = text.count > 64 ? String(text.prefix(64)) + "…" : String(text)
    return "\"\(cut)\""
}
