import MeridianCore
import Testing

/// Joining, the one order of a session's events and the camera's constraints, on hubs in
/// memory: one, and four with the members spread over them.
@Suite("Sessions")
struct SessionFlowTests {
    @Test(arguments: [1, 4]) func joinGivesSnapshotAndAnnouncesToOthers(threads: Int) throws {
        let server = try MemoryServer(threads: threads)
        let alice = try server.joined("s", name: "Alice", role: "owner")
        #expect(alice.welcome["participant"]?.string == "p1")
        #expect(alice.welcome["resumed"]?.bool == false)
        #expect(alice.welcome["snapshot"]?["participants"]?.array?.count == 1)
        #expect(alice.welcome["epoch"]?.string?.isEmpty == false)

        let bob = try server.joined("s", name: "Bob")
        #expect(bob.welcome["seq"]?.number == 2)
        let joined = try alice.next()
        #expect(joined["type"]?.string == "participant.joined")
        #expect(joined["seq"]?.number == 2)
        #expect(joined["participant"]?["name"]?.string == "Bob")
    }

    @Test(arguments: [1, 4]) func everyoneSeesTheSameEventsInOneOrder(threads: Int) throws {
        let server = try MemoryServer(threads: threads)
        let alice = try server.joined("s", name: "Alice")
        let bob = try server.joined("s", name: "Bob")
        _ = try alice.next("participant.joined")

        // Interleaved edits from both clients.
        for i in 0..<20 {
            let (sender, id) = i % 2 == 0 ? (alice, "a\(i)") : (bob, "b\(i)")
            let ack = try sender.request("annotation.add", ["annotation": .point(id, Double(i), Double(i))])
            #expect(ack["type"]?.string == "ack")
        }
        func stream(_ c: MemoryClient) throws -> [JSONValue] {
            try (0..<20).map { _ in try c.next("annotation.added").message }
        }
        let a = try stream(alice), b = try stream(bob)
        #expect(a == b)
        let seqs = a.compactMap { $0["seq"]?.number }
        #expect(seqs == (0..<20).map { Double(3 + $0) })

        // A late joiner's snapshot holds all of it.
        let carol = try server.joined("s", name: "Carol", role: "viewer")
        #expect(carol.welcome["snapshot"]?["annotations"]?.array?.count == 20)
        #expect(carol.welcome["seq"]?.number == 23)
    }

    @Test func clampedCameraIsReportedToTheSender() throws {
        let server = try MemoryServer()
        let owner = try server.joined("s", name: "Olga", role: "owner")
        let configured = try owner.request("session.configure", ["settings": .object([
            "constraints": .object(["maxZoom": .number(10), "policy": .string("clamp")]),
        ])])
        #expect(configured["type"]?.string == "ack")
        let ack = try owner.request("camera.end", [
            "camera": .object(["center": .coordinate(10, 20), "zoom": .number(15)]), "animated": .bool(false),
        ])
        #expect(ack["camera"]?["zoom"]?.number == 10)
        let event = try owner.next("camera.end").message
        #expect(event["camera"]?["zoom"]?.number == 10)
    }
}
