import MeridianCore
import Testing

/// What hidden members and overview watchers receive, on hubs in memory with a clock the test
/// moves.
@Suite("Dashboard messages")
struct DashboardMessageTests {
    @Test func refusedDragIsAnnouncedToHiddenMembersOnly() throws {
        let server = try MemoryServer()
        let alice = try server.joined("s", name: "Alice")
        let bob = try server.joined("s", name: "Bob")
        let wall = try server.joined("s", name: "Wall", role: "viewer", extra: ["hidden": .bool(true)])
        try alice.request("annotation.add", ["annotation": .point("pin", 1, 2)])
        try alice.request("drag", ["id": .string("pin"), "state": .string("starting")])
        let refused = try bob.request("drag", ["id": .string("pin"), "state": .string("starting")])
        #expect(refused["code"]?.string == "drag_conflict")

        let notice = try wall.next("drag.refused").message
        #expect(notice["id"]?.string == "pin")
        #expect(notice["participant"] == bob.welcome["participant"])
        #expect(notice["holder"] == alice.welcome["participant"])
        #expect(notice["transient"]?.bool == true)
        #expect(notice["seq"]?.number == (try wall.request("ping")["seq"]?.number))
        // Listed participants never receive it: their next message is the answer to a ping.
        for client in [alice, bob] {
            let pong = try client.request("ping")
            #expect(pong["type"]?.string == "ack")
            #expect(!client.pending.contains { $0["type"]?.string == "drag.refused" })
        }
    }

    @Test func aHiddenJoinNeverCreatesASession() throws {
        let server = try MemoryServer()
        let wall = try server.client()
        let hidden: [String: JSONValue] = ["session": .string("nowhere"), "name": .string("Wall"), "role": .string("viewer"), "hidden": .bool(true)]
        let refused = try wall.request("join", hidden)
        #expect(refused["type"]?.string == "error")
        #expect(refused["code"]?.string == "session_not_found")
        let watcher = try server.client()
        _ = try watcher.request("overview.watch")
        #expect(try watcher.next("overview").message["sessions"]?.array?.isEmpty == true)
        // Once a participant has started it, the same connection watches it.
        _ = try server.joined("nowhere", name: "Alice")
        let welcome = try wall.request("join", hidden)
        #expect(welcome["type"]?.string == "welcome")
    }

    /// With 4 threads the sessions and the watcher are on different threads: the overview
    /// gathers every thread's part.
    @Test(arguments: [1, 4]) func overviewCountsParticipantsDashboardsAndRates(threads: Int) throws {
        let server = try MemoryServer(threads: threads)
        let alice = try server.joined("busy", name: "Alice")
        _ = try server.joined("busy", name: "Wall", role: "viewer", extra: ["hidden": .bool(true)])
        _ = try server.joined("quiet", name: "Bob")
        let watcher = try server.client()
        let ack = try watcher.request("overview.watch")
        #expect(ack["type"]?.string == "ack")
        let first = try watcher.next("overview").message
        let busy = first["sessions"]?.array?.first { $0["session"]?.string == "busy" }
        #expect(busy?["participants"]?.number == 1)
        #expect(busy?["names"]?.array?.map { $0.string } == ["Alice"])
        #expect(busy?["lastActivity"]?.number != nil)
        #expect(busy?["dashboards"]?.number == 1)
        #expect(first["sessions"]?.array?.map { $0["session"]?.string } == ["busy", "quiet"])
        #expect(first["connections"]?.number == 4)

        // The overview's rates are over the second between two ticks.
        server.tick()
        for i in 0..<10 {
            try alice.request("annotation.add", ["annotation": .point("p\(i)", 1, 2)])
        }
        server.advance(by: .seconds(1))
        server.tick()
        // A later overview reports the requests and the deliveries they caused.
        let later = try watcher.next("overview").message
        let entry = later["sessions"]?.array?.first { $0["session"]?.string == "busy" }
        #expect(entry?["annotations"]?.number == 10, "\(later)")
        #expect(entry?["messagesPerSecond"]?.number ?? 0 > 0, "\(later)")
        let reported = try #require(entry, "no overview reported the requests")
        #expect(reported["deliveriesPerSecond"]!.number! >= reported["messagesPerSecond"]!.number!)
    }
}
