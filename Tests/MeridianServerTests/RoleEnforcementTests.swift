import MeridianAuth
import MeridianCore
import Testing

/// Every command that changes shared state, as sent on the wire.
private let sharedChanges: [(type: String, fields: [String: JSONValue])] = [
    ("annotation.add", ["annotation": .point("b", 1, 1)]),
    ("annotation.update", ["id": .string("a"), "changes": .object(["title": .string("B")])]),
    ("annotation.remove", ["id": .string("a")]),
    ("drag", ["id": .string("a"), "state": .string("starting")]),
    ("callout.show", ["callout": .object(["title": .string("x"), "anchor": .object(["annotation": .string("a")])])]),
    ("callout.hide", [:]),
    ("session.configure", ["settings": .object(["styleURL": .string("mapbox://styles/x")])]),
    ("camera.lease.acquire", [:]),
    ("camera.lease.acquire", ["force": .bool(true)]),
    ("camera.begin", ["target": .string("shared")]),
]

/// Presence: what a viewer may do and a dashboard may not.
private let presence: [(type: String, fields: [String: JSONValue])] = [
    ("select", ["id": .string("a")]),
    ("camera.begin", [:]),
    ("location", ["location": .object(["coordinate": .coordinate(1, 1), "accuracy": .number(5)])]),
]

@Suite("Roles from tokens, enforced on every command")
struct RoleEnforcementTests {
    /// A session with annotation "a" and a callout, owned by "owner"; then `role` joins.
    private func stage(_ session: String, role: TokenRole) async throws -> (MemoryServer, owner: MemoryClient, member: MemoryClient) {
        let server = try await tokenMemoryServer()
        let owner = try server.client()
        try owner.join(session, token: try await token("owner", role: .owner))
        #expect(try owner.request("annotation.add", ["annotation": .point("a", 0, 0, canShowCallout: true)])["type"]?.string == "ack")
        let member = try server.client()
        #expect(try member.join(session, token: try await token("member", role: role))["type"]?.string == "welcome")
        return (server, owner, member)
    }

    @Test func viewerMayChangeNothingShared() async throws {
        let (server, owner, viewer) = try await stage("auth-viewer", role: .viewer)
        for (type, fields) in sharedChanges {
            let answer = try viewer.request(type, fields)
            #expect(answer["code"]?.string == "forbidden", "viewer \(type) \(fields): \(answer)")
        }
        for (type, fields) in presence {
            #expect(try viewer.request(type, fields)["type"]?.string == "ack", "viewer \(type) is presence")
        }
        // Nothing shared changed: annotation "a" is still there, untitled.
        let snapshot = try server.client()
        try snapshot.join("auth-viewer", token: try await token("late", role: .viewer))
        let annotations = snapshot.welcome["snapshot"]?["annotations"]?.array ?? []
        #expect(annotations.map { $0["id"]?.string } == ["a"])
        #expect(annotations.first?["title"] == nil)
        _ = owner
    }

    @Test func editorMayChangeEverythingButTheSettings() async throws {
        let (_, _, editor) = try await stage("auth-editor", role: .editor)
        let configure = try editor.request("session.configure", ["settings": .object(["styleURL": .string("mapbox://styles/x")])])
        #expect(configure["code"]?.string == "forbidden")
        #expect(try editor.request("annotation.update", ["id": .string("a"), "changes": .object(["title": .string("B")])])["type"]?.string == "ack")
    }

    @Test func dashboardMaySendNoSessionCommand() async throws {
        let (_, _, dashboard) = try await stage("auth-dashboard", role: .dashboard)
        for (type, fields) in sharedChanges + presence {
            let answer = try dashboard.request(type, fields)
            #expect(answer["code"]?.string == "forbidden", "dashboard \(type): \(answer)")
        }
        #expect(try dashboard.request("ping")["type"]?.string == "ack")
    }
}
