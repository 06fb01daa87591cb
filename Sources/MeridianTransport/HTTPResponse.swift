/// A plain HTTP request that reached the server on its WebSocket port.
public struct HTTPRequest: Sendable {
    /// "GET", "POST", …
    public var method: String
    /// The path without the query, e.g. "/metrics".
    public var path: String
    /// The query string without "?", or "" if none.
    public var query: String
    /// The request body (POST, PUT, PATCH with a Content-Length), at most
    /// `TransportConfiguration.maxHTTPBodyBytes`.
    public var body: [UInt8]
    /// The Authorization header, if any.
    public var authorization: String?

    public init(method: String, path: String, query: String = "", body: [UInt8] = [], authorization: String? = nil) {
        self.method = method
        self.path = path
        self.query = query
        self.body = body
        self.authorization = authorization
    }
}

/// A complete HTTP response: status, content type, further headers and body, sent with a
/// Content-Length.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]
    /// Headers besides Content-Type and Content-Length, e.g. `("allow", "GET, POST")` on a 405.
    /// Names in lower case (as HTTP/2 wants them); one whose name or value holds a CR, LF or
    /// NUL is not sent.
    public var headers: [(name: String, value: String)]

    public init(status: Int, contentType: String = "application/json", body: [UInt8], headers: [(name: String, value: String)] = []) {
        self.status = status
        self.contentType = contentType
        self.body = body
        self.headers = headers
    }

    /// True when `text` can stand in a header line as it is.
    static func isHeaderSafe(_ text: String) -> Bool {
        !text.utf8.contains { $0 == 13 || $0 == 10 || $0 == 0 }
    }

    /// A JSON response from a UTF-8 string.
    public static func json(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, body: Array(body.utf8))
    }

    /// The response as the raw bytes of an HTTP/1.1 message that closes the connection (for
    /// connections the transport answers itself, without libwebsockets' HTTP writer).
    var closingMessage: [UInt8] {
        var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        head += "content-type: \(contentType)\r\ncontent-length: \(body.count)\r\nconnection: close\r\n"
        for (name, value) in headers where Self.isHeaderSafe(name) && Self.isHeaderSafe(value) {
            head += "\(name): \(value)\r\n"
        }
        head += "\r\n"
        return Array(head.utf8) + body
    }

    /// The JSON 404 the server answers for a path nobody handles.
    public static let notFound = HTTPResponse.json(404, #"{"error":"not_found","message":"no such path"}"#)
    static let bodyTooLarge = HTTPResponse.json(413, #"{"error":"body_too_large","message":"the request body exceeds the server's limit"}"#)
    static let truncatedRequestLine = HTTPResponse.json(
        400, #"{"error":"bad_request","message":"the request line has no HTTP version: a control character (%0D, %0A) in the target ends it"}"#)
    static let healthy = HTTPResponse.json(200, #"{"status":"ok"}"#)
    static let ready = HTTPResponse.json(200, #"{"status":"ready"}"#)
    static let draining = HTTPResponse.json(503, #"{"status":"draining"}"#)

    static func notReady(_ reason: String) -> HTTPResponse {
        .json(503, #"{"status":"not_ready","reason":"\#(jsonEscaped(reason))"}"#)
    }

    /// 405 for a method `request`'s path does not answer, listing those it does in `Allow`.
    public static func methodNotAllowed(_ request: HTTPRequest, allow: [String]) -> HTTPResponse {
        let use = allow.count == 1 ? allow[0] : allow.joined(separator: " or ")
        let message = jsonEscaped("\(request.method.prefix(32)) \(request.path.prefix(256)): use \(use)")
        return HTTPResponse(status: 405, body: Array(#"{"error":"method_not_allowed","message":"\#(message)"}"#.utf8),
                            headers: [("allow", allow.joined(separator: ", "))])
    }

    /// `text` for inside a JSON string: quotes and backslashes escaped, control characters as spaces.
    static func jsonEscaped(_ text: some StringProtocol) -> String {
        var escaped = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"", "\\": escaped += "\\\(scalar)"
            case _ where scalar.value < 0x20: escaped += " "
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }
}
