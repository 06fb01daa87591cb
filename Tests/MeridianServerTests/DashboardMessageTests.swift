import MeridianCore
import MeridianTransport
import MeridianTesting
import Testing

@Suite("Dashboard messages over real sockets")
struct DashboardMessageTests {
    @Test func refusedDragIsAnnouncedToHiddenMembersOnly() throws {
        let server = try TestServer()
        defer { server.stop() }
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
        let server = try TestServer()
        defer { server.stop() }
        let wall = try server.client()
        let hidden: [String: JSONValue] = ["session": .string("nowhere"), "name": .string("Wall"), "role": .string("viewer"), "hidden": .bool(true)]
        let refused = try wall.request("join", hidden)
        #expect(refused["type"]?.string == "error")
        #expect(refused["code"]?.string == "session_not_found")
        let watcher = try server.client()
        _ = try watcher.request("overview.watch")
        #expect(try watcher.next("overview").message["sessions"]?.array?.isEmpty == true)
        // Once a participant has started it, the same connection watches it.
        let alice = try server.joined("nowhere", name: "Alice")
        defer { withExtendedLifetime(alice) {} }
        let welcome = try wall.request("join", hidden)
        #expect(welcome["type"]?.string == "welcome")
    }

    /// With 4 threads the sessions and the watcher are on different threads: the overview
    /// gathers every thread's part.
    @Test(arguments: [1, 4]) func overviewCountsParticipantsDashboardsAndRates(threads: Int) throws {
        let server = try TestServer { $0.threads = threads }
        defer { server.stop() }
        let alice = try server.joined("busy", name: "Alice")
        let wall = try server.joined("busy", name: "Wall", role: "viewer", extra: ["hidden": .bool(true)])
        let bob = try server.joined("quiet", name: "Bob")
        defer { withExtendedLifetime((wall, bob)) {} }
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

        for i in 0..<10 {
            try alice.request("annotation.add", ["annotation": .point("p\(i)", 1, 2)])
        }
        // A later overview reports the requests and the deliveries they caused. Each hub posts
        // its sessions' rates over its last second, and a watcher on another thread gets the
        // home's latest post, which may cover a second after the burst (rate 0): requests keep
        // coming until an overview shows them.
        var entry: JSONValue?
        var added = 10
        let deadline = ContinuousClock.now + .seconds(10)
        while entry == nil, ContinuousClock.now < deadline {
            if let m = try? watcher.next(timeout: .milliseconds(100)), m["type"]?.string == "overview",
               let busy = m["sessions"]?.array?.first(where: { $0["session"]?.string == "busy" }),
               busy["annotations"]?.number ?? 0 >= 10, busy["messagesPerSecond"]?.number ?? 0 > 0 {
                entry = busy
            } else {
                try alice.request("annotation.add", ["annotation": .point("p\(added)", 1, 2)])
                added += 1
            }
        }
        let reported = try #require(entry, "no overview reported the requests")
        #expect(reported["deliveriesPerSecond"]!.number! >= reported["messagesPerSecond"]!.number!)
    }
}
