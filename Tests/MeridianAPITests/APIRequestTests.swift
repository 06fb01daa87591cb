import MeridianAPI
import MeridianCore
import Testing

/// Routes, methods, ids and bodies of the session API, decoded without a server.
struct APIRequestTests {
    func decode(_ method: String, _ path: String, query: String = "", body: String = "") -> Result<APIRequest, APIRefusal>? {
        APIRequest.decode(method: method, path: path, query: query, body: Array(body.utf8))
    }

    func refusal(_ method: String, _ path: String, query: String = "", body: String = "") -> APIRefusal? {
        if case .failure(let r)? = decode(method, path, query: query, body: body) { return r }
        return nil
    }

    @Test func routes() throws {
        #expect(try decode("GET", "/api/sessions")?.get() == .list)
        #expect(try decode("GET", "/api/sessions/a.b_c-9")?.get() == .read(id: "a.b_c-9"))
        #expect(try decode("DELETE", "/api/sessions/s")?.get() == .delete(id: "s"))
        #expect(try decode("GET", "/api/sessions/s/events", query: "after=3")?.get() == .events(id: "s", EventLogQuery(after: 3)))
        #expect(try decode("GET", "/api/sessions/s/rates")?.get() == .rates(id: "s"))
        #expect(try decode("GET", "/api/sessions/s/rates")?.get().reads == true)
        #expect(try decode("POST", "/api/sessions", body: #"{"id":"s"}"#)?.get() == .create(id: "s", settings: nil))
        var patch = SettingsPatch()
        patch.dragPolicy = .priority
        #expect(try decode("PATCH", "/api/sessions/s/settings", body: #"{"dragPolicy":"priority"}"#)?.get() == .configure(id: "s", settings: patch))
    }

    @Test(arguments: ["/", "/api", "/api/", "/api/sessionsx", "/apix/sessions", "/metrics", "api/sessions", ""])
    func otherPathsAreNotTheAPIs(_ path: String) {
        #expect(decode("GET", path) == nil)
    }

    @Test(arguments: ["/api/sessions/s/other", "/api/sessions/s/events/", "/api/sessions/s/rates/x", "/api/sessions/s/settings/x", "/api/sessions/s/events/more/still"])
    func unknownPathsBelowTheAPIAre404(_ path: String) {
        let r = refusal("GET", path)
        #expect(r?.status == 404)
        #expect(r?.code == "not_found")
    }

    @Test(arguments: [
        ("TRACE", "/api/sessions", ["GET", "POST"]), ("PUT", "/api/sessions", ["GET", "POST"]),
        ("HEAD", "/api/sessions/s", ["GET", "DELETE"]), ("OPTIONS", "/api/sessions/s", ["GET", "DELETE"]),
        ("GET", "/api/sessions/s/settings", ["PATCH"]), ("DELETE", "/api/sessions/s/events", ["GET"]), ("POST", "/api/sessions/s/rates", ["GET"]),
        ("", "/api/sessions", ["GET", "POST"]), ("TRACE", "/api/sessions/%0D", ["GET", "DELETE"]),
    ])
    func undeclaredMethodsAre405WithTheAllowedOnes(_ method: String, _ path: String, _ allow: [String]) {
        let r = refusal(method, path)
        #expect(r?.status == 405)
        #expect(r?.code == "method_not_allowed")
        #expect(r?.allow == allow)
        #expect(r?.message.contains("use \(allow.joined(separator: " or "))") == true)
    }

    /// `/api/sessions/%0D` (lws hands the path over decoded) answered with the list.
    @Test(arguments: ["/api/sessions/", "/api/sessions/\r", "/api/sessions/%0D", "/api/sessions/a b", "/api/sessions/é",
                      "/api/sessions/" + String(repeating: "x", count: 129), "/api/sessions//events", "/api/sessions/\0/settings"])
    func aPathSegmentThatIsNoSessionIDIs400(_ path: String) {
        for method in ["GET", "DELETE", "PATCH"] where refusal(method, path)?.status != 405 {
            let r = refusal(method, path, body: "{}")
            #expect(r?.status == 400, "\(method) \(path)")
            #expect(r?.code == "invalid_field")
            #expect(r?.field == "id")
        }
    }

    @Test(arguments: [
        (#"{"tint": null}"#, "settings.tint"), (#"{"styleURL": null}"#, "settings.styleURL"),
        (#"{"dragPolicy": null}"#, "settings.dragPolicy"), (#"{"leaseTimeoutMs": null}"#, "settings.leaseTimeoutMs"),
        (#"{"tint": ""}"#, "settings.tint"), (#"{"tint": "="}"#, "settings.tint"), (##"{"tint": "#12"}"##, "settings.tint"),
        (#"{"tint": 5}"#, "settings.tint"), (#"{"leaseTimeoutMs": 1.5}"#, "settings.leaseTimeoutMs"),
        (#"{"leaseTimeoutMs": 1e300}"#, "settings.leaseTimeoutMs"), (#"{"other": 1}"#, "settings.other"),
        (#"{"constraints": {"bounds": null}}"#, "settings.constraints.bounds"),
        (#"{"constraints": {"minZoom": 1, "policy": null}}"#, "settings.constraints.policy"),
        (#"{"constraints": {"bounds": {"southWest": {"latitude": null, "longitude": 0}, "northEast": null}}}"#, "settings.constraints.bounds.northEast"),
        ("[]", "settings"), ("null", "settings"), ("3", "settings"),
    ])
    func badSettingsAre400NamingTheField(_ body: String, _ field: String) {
        let r = refusal("PATCH", "/api/sessions/s/settings", body: body)
        #expect(r?.status == 400, "\(body)")
        #expect(r?.code == "invalid_field", "\(body)")
        #expect(r?.field == field, "\(body)")
        let created = refusal("POST", "/api/sessions", body: #"{"id":"s","settings":\#(body)}"#)
        #expect(created?.field == field, "\(body)")
    }

    /// openapi.yaml's maxLength counts code points: 2,049 of them are refused even when they
    /// make 2,048 characters ("\r\n" is one), and 2,048 are taken.
    @Test func styleURLLengthIsCountedInCodePoints() throws {
        let over = #"{"styleURL": ""# + String(repeating: "a", count: 2_047) + #"\r\n"}"#
        #expect(refusal("PATCH", "/api/sessions/s/settings", body: over)?.field == "settings.styleURL")
        let combining = #"{"styleURL": ""# + String(repeating: "e\u{0301}", count: 1_025) + #""}"#
        #expect(refusal("PATCH", "/api/sessions/s/settings", body: combining)?.field == "settings.styleURL")
        let fits = #"{"styleURL": ""# + String(repeating: "a", count: 2_048) + #""}"#
        #expect(try decode("PATCH", "/api/sessions/s/settings", body: fits)?.get() != nil)
    }

    @Test func constraintsNullRemovesThem() throws {
        guard case .configure(_, let patch) = try decode("PATCH", "/api/sessions/s/settings", body: #"{"constraints": null}"#)?.get() else {
            Issue.record("not a configure")
            return
        }
        #expect(patch.constraints == CameraConstraints())
    }

    @Test(arguments: [
        ("", "invalid_message", nil), ("{", "invalid_message", nil), ("[1]", "invalid_message", nil), ("null", "invalid_message", nil),
        ("{}", "invalid_field", "id"), (#"{"id": 1}"#, "invalid_field", "id"), (#"{"id": null}"#, "invalid_field", "id"),
        (#"{"id": ""}"#, "invalid_field", "id"), (#"{"id": "a/b"}"#, "invalid_field", "id"),
        (#"{"id": "s", "x": 1}"#, "invalid_field", "x"), (#"{"id": "s", "settings": null}"#, "invalid_field", "settings"),
        (#"{"id": "s", "id": "t"}"#, "invalid_message", nil),
    ] as [(String, String, String?)])
    func badCreatesAre400(_ body: String, _ code: String, _ field: String?) {
        let r = refusal("POST", "/api/sessions", body: body)
        #expect(r?.status == 400, "\(body)")
        #expect(r?.code == code, "\(body)")
        #expect(r?.field == field, "\(body)")
    }

    @Test func sessionIDs() {
        #expect(SessionID.isValid("a"))
        #expect(SessionID.isValid(String(repeating: "x", count: 128)))
        #expect(!SessionID.isValid(String(repeating: "x", count: 129)))
        #expect(!SessionID.isValid(""))
        #expect(!SessionID.isValid("é"))
        // A URL path cannot name these (dot segments): the API could create but never address them.
        #expect(!SessionID.isValid("."))
        #expect(!SessionID.isValid(".."))
        #expect(SessionID.isValid("..."))
        #expect(SessionID.isValid(".a"))
    }
}
