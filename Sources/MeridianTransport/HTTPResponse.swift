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

/// A complete HTTP response: status, content type and body, sent with a Content-Length.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var contentType: String
    public var body: [UInt8]

    public init(status: Int, contentType: String = "application/json", body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.body = body
    }

    /// A JSON response from a UTF-8 string.
    public static func json(_ status: Int, _ body: String) -> HTTPResponse {
        HTTPResponse(status: status, body: Array(body.utf8))
    }

    /// The JSON 404 the server answers for a path nobody handles.
    public static let notFound = HTTPResponse.json(404, #"{"error":"not_found","message":"no such path"}"#)
    static let bodyTooLarge = HTTPResponse.json(413, #"{"error":"body_too_large","message":"the request body exceeds the server's limit"}"#)
    static let healthy = HTTPResponse.json(200, #"{"status":"ok"}"#)
    static let ready = HTTPResponse.json(200, #"{"status":"ready"}"#)
    static let draining = HTTPResponse.json(503, #"{"status":"draining"}"#)

    static func notReady(_ reason: String) -> HTTPResponse {
        var escaped = ""
        for scalar in reason.unicodeScalars {
            switch scalar {
            case "\"", "\\": escaped += "\\\(scalar)"
            case _ where scalar.value < 0x20: escaped += " "
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return .json(503, #"{"status":"not_ready","reason":"\#(escaped)"}"#)
    }
}
