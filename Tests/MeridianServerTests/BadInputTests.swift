import MeridianCore
import Testing

/// Requests the hub refuses, on a hub in memory: each is answered with an error naming what is
/// wrong, changes nothing, and the connection goes on.
@Suite("Bad input")
struct BadInputTests {
    /// Sends raw text and returns the error; the session must be unchanged
    /// and the connection still answer a ping.
    func refuse(_ text: String, code: String, field: String? = nil, role: String = "editor") throws {
        let server = try MemoryServer()
        let client = try server.joined("s", name: "Eve", role: role)
        let watcher = try server.joined("s", name: "Watcher", role: "viewer")
        _ = try client.next("participant.joined")
        client.sendText(text)
        let error = try client.next()
        #expect(error["type"]?.string == "error", "\(text) -> \(error)")
        #expect(error["code"]?.string == code, "\(text) -> \(error)")
        if let field { #expect(error["field"]?.string == field, "\(text) -> \(error)") }
        #expect(error["message"]?.string?.isEmpty == false)
        #expect(try client.request("ping")["type"]?.string == "ack")
        // Nothing changed: a later joiner sees the watcher's snapshot plus itself.
        let later = try server.joined("s", name: "Later", role: "viewer")
        var expected = try #require(watcher.welcome["snapshot"])
        if case .object(var o) = expected, case .array(var ps) = o["participants"], let me = later.welcome["snapshot"]?["participants"]?.array?.last {
            ps.append(me)
            o["participants"] = .array(ps)
            o["seq"] = .number(3)
            expected = .object(o)
        }
        #expect(later.welcome["snapshot"] == expected)
    }

    @Test func invalidJSON() throws { try refuse("{nope", code: "invalid_message") }
    @Test func unknownType() throws { try refuse(#"{"type":"teleport","ref":1}"#, code: "unknown_type", field: "type") }
    @Test func missingField() throws { try refuse(#"{"type":"select","ref":1}"#, code: "invalid_field", field: "id") }
    @Test func wrongType() throws { try refuse(#"{"type":"select","ref":1,"id":7}"#, code: "invalid_field", field: "id") }
    @Test func nan() throws {
        try refuse(#"{"type":"camera.end","ref":1,"camera":{"center":{"latitude":NaN,"longitude":0},"zoom":3}}"#, code: "invalid_message")
    }
    @Test func latitude91() throws {
        try refuse(#"{"type":"annotation.add","ref":1,"annotation":{"id":"x","type":"point","coordinate":{"latitude":91,"longitude":0}}}"#,
                   code: "invalid_field", field: "annotation.coordinate.latitude")
    }
    @Test func viewerEdit() throws {
        try refuse(#"{"type":"annotation.add","ref":1,"annotation":{"id":"x","type":"point","coordinate":{"latitude":1,"longitude":0}}}"#,
                   code: "forbidden", role: "viewer")
    }
    @Test func unknownAnnotation() throws {
        try refuse(#"{"type":"annotation.remove","ref":1,"id":"ghost"}"#, code: "not_found", field: "id")
    }

    @Test func startingToNoneIsRefused() throws {
        let server = try MemoryServer()
        let alice = try server.joined("s", name: "Alice")
        try alice.request("annotation.add", ["annotation": .point("pin", 1, 2)])
        try alice.request("drag", ["id": .string("pin"), "state": .string("starting")])
        let refused = try alice.request("drag", ["id": .string("pin"), "state": .string("none")])
        #expect(refused["code"]?.string == "illegal_drag_transition")
        #expect(refused["ref"]?.number != nil)
    }

    @Test func commandBeforeJoin() throws {
        let server = try MemoryServer()
        let client = try server.client()
        let refused = try client.request("select", ["id": .string("x")])
        #expect(refused["code"]?.string == "not_joined")
    }
}
