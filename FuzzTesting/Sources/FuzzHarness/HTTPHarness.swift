import MeridianAPI
import MeridianCore
import MeridianHTTP
import MeridianProtocol

/// Feeds fuzzer bytes to the HTTP side's pure functions: the request line of a method lws does
/// not parse (`HTTPRequestLine`), the API's routing, ids, query and bodies (`APIRequest.decode`,
/// `EventLogQuery`, `APIBody`), query strings and Content-Length values.
///
/// The input is a request as the hub sees it once lws has read it: `METHOD SP PATH[?QUERY] LF BODY`
/// (the first line split at its first space and its first "?"; everything after the first LF is
/// the body). The same bytes also go to `HTTPRequestLine.parse` as they are.
public enum HTTPHarness {
    public static func run(_ bytes: [UInt8]) throws(Violation) {
        try requestLine(bytes)
        let newline = bytes.firstIndex(of: 10) ?? bytes.endIndex
        let line = String(decoding: bytes[..<newline], as: UTF8.self)
        let body = newline < bytes.endIndex ? Array(bytes[(newline + 1)...]) : []
        let space = line.firstIndex(of: " ") ?? line.endIndex
        let method = String(line[..<space])
        let target = space < line.endIndex ? line[line.index(after: space)...] : ""
        let mark = target.firstIndex(of: "?") ?? target.endIndex
        let path = String(target[..<mark])
        let query = mark < target.endIndex ? String(target[target.index(after: mark)...]) : ""

        try api(method: method, path: path, query: query, body: body)
        try eventLogQuery(query)
        try bodies(body)
        try contentLength(line)
    }

    static func requestLine(_ bytes: [UInt8]) throws(Violation) {
        let parsed = HTTPRequestLine.parse(bytes)
        try require(HTTPRequestLine.parse(bytes) == parsed, "request line parsed twice, two results")
        guard case .line(let l) = parsed else {
            if parsed == .incomplete { try require(!bytes.contains(10) && bytes.count < HTTPRequestLine.maxLength, "incomplete, yet \(bytes.count) bytes with a line end") }
            return
        }
        try require(!l.method.isEmpty && l.method.utf8.count <= 32 && !l.method.contains(" "), "method \(l.method.debugDescription)")
        try require(!l.path.contains(" ") && !l.path.contains("?") && !l.query.contains(" "), "target split wrongly: \(l)")
        // A `%00` anywhere in the target is found (the transport answers it before libwebsockets).
        switch l.encodedNUL {
        case nil: try require(!l.path.contains("%00") && !l.query.contains("%00"), "a %00 in \(l) not found")
        case .path: try require(l.path.contains("%00"), "a %00 found in the path of \(l)")
        case .parameter: try require(!l.path.contains("%00") && l.query.contains("%00"), "a %00 found in the query of \(l)")
        }
        let again = HTTPRequestLine.parse(Array("\(l.method) \(l.path)\(l.query.isEmpty ? "" : "?" + l.query) HTTP/1.1\r\n".utf8))
        if case .line(let back) = again {
            try require(back == l || (l.query.isEmpty && back.path == l.path), "request line written back reads as \(back), not \(l)")
        } else if !(l.path.isEmpty && l.query.isEmpty) {
            throw Violation("request line \(l) written back does not parse: \(again)")
        }
    }

    static func api(method: String, path: String, query: String, body: [UInt8]) throws(Violation) {
        let decoded = APIRequest.decode(method: method, path: path, query: query, body: body)
        try require(APIRequest.decode(method: method, path: path, query: query, body: body) == decoded, "decoding the same request twice gave two results")
        let underAPI = path == "/api/sessions" || path.hasPrefix("/api/sessions/")
        guard let decoded else {
            try require(!underAPI, "\(path.debugDescription) is under /api/sessions, yet not the API's")
            return
        }
        try require(underAPI, "\(path.debugDescription) is not under /api/sessions, yet the API's")
        switch decoded {
        case .failure(let r):
            try require([400, 404, 405].contains(r.status), "refused with \(r.status)")
            try require(!r.code.isEmpty && !r.message.isEmpty, "a refusal without a code or message: \(r)")
            try require((r.status == 405) == (r.allow != nil), "Allow on \(r.status), or a 405 without it")
            if let allow = r.allow {
                try require(!allow.isEmpty && !allow.contains(method), "405 for \(method.debugDescription), allowing \(allow)")
            }
            if r.status == 400 { try require(r.code == "invalid_field" || r.code == "invalid_message", "400 \(r.code)") }
            // What the hub sends: a JSON object that parses back to the same strings.
            var fields: [String: JSONValue] = ["error": .string(r.code), "message": .string(r.message)]
            if let field = r.field { fields["field"] = .string(field) }
            let error = JSONValue.object(fields)
            try require(JSONValue.parse(error.encoded) == error, "the error body does not read back: \(r)")
        case .success(let request):
            let expected: String = switch request {
            case .list, .read, .events, .rates: "GET"
            case .create: "POST"
            case .configure: "PATCH"
            case .delete: "DELETE"
            }
            try require(method == expected, "\(method.debugDescription) decoded as \(request)")
            if let id = request.session { try require(SessionID.isValid(id), "decoded session id \(id.debugDescription)") }
            if case .events(_, let page) = request {
                try require(page.after >= 0 && (1...EventLogQuery.maxLimit).contains(page.limit), "page \(page)")
            }
        }
    }

    static func eventLogQuery(_ query: String) throws(Violation) {
        let parameters = QueryString.parameters(query)
        let separators = query.utf8.filter { $0 == UInt8(ascii: "&") || $0 == UInt8(ascii: ",") }.count
        try require(parameters.count <= separators + 1, "\(parameters.count) parameters from \(separators) separators")
        guard case .success(let page) = EventLogQuery.parse(query) else { return }
        try require(parameters.count <= 6, "a page from \(parameters.count) parameters")
        try require([page.after, page.before ?? 0, page.since ?? 0, page.until ?? 0].allSatisfy { $0 >= 0 }, "page \(page)")
        try require(EventLogQuery.parse(page.queryString) == .success(page), "page \(page) written back as \(page.queryString) reads otherwise")
    }

    static func bodies(_ body: [UInt8]) throws(Violation) {
        let created = APIBody.create(body)
        switch created {
        case .success(let c):
            try require(SessionID.isValid(c.id), "created id \(c.id.debugDescription)")
            if c.settings != nil, case .object(let o)? = JSONValue.parse(body) { try settingsAgree(o["settings"]) }
        case .failure(let r):
            try require(r.status == 400 && !r.message.isEmpty, "create refused with \(r)")
        }
        switch APIBody.settings(body) {
        case .success:
            try settingsAgree(JSONValue.parse(body))
        case .failure(let r):
            try require(r.status == 400 && !r.message.isEmpty, "settings refused with \(r)")
        }
    }

    /// A settings change the API took: an object with no `null` but a top-level `constraints`,
    /// which the WebSocket decoder takes too.
    static func settingsAgree(_ json: JSONValue?) throws(Violation) {
        guard case .object(let fields)? = json else { throw Violation("settings taken from \(json.map { "\($0)" } ?? "nothing")") }
        for (key, value) in fields where key != "constraints" {
            try require(value != .null, "settings.\(key): null taken")
        }
        if case .string(let url)? = fields["styleURL"] {
            try require(url.unicodeScalars.count <= APIBody.maxStyleURLLength, "a styleURL of \(url.unicodeScalars.count) code points taken")
        }
        if let constraints = fields["constraints"], constraints != .null {
            try require(!containsNull(constraints), "a null inside constraints taken: \(constraints)")
        }
        do throws(ProtocolError) {
            _ = try StoredForm.settingsPatch(.object(fields))
        } catch {
            throw Violation("the API took settings the protocol refuses: \(error)")
        }
    }

    static func containsNull(_ value: JSONValue) -> Bool {
        switch value {
        case .null: true
        case .object(let o): o.values.contains(where: containsNull)
        case .array(let a): a.contains(where: containsNull)
        default: false
        }
    }

    static func contentLength(_ text: String) throws(Violation) {
        guard let n = ContentLength.parse(text) else { return }
        try require(n >= 0 && ContentLength.parse(String(n)) == n, "Content-Length \(text.debugDescription) read as \(n)")
        try require(text.utf8.allSatisfy { $0 >= 48 && $0 <= 57 }, "Content-Length \(text.debugDescription) is not digits only")
    }
}
