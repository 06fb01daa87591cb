import MeridianCore
import Testing

/// Exclusive drags on hubs in memory (one, and four with the members spread over them), on a
/// clock the test moves.
@Suite("Drags")
struct DragTests {
    @Test(arguments: [1, 4]) func exclusiveDragRefusesSecondStarterNamingHolder(threads: Int) throws {
        let server = try MemoryServer(threads: threads)
        let alice = try server.joined("s", name: "Alice")
        let bob = try server.joined("s", name: "Bob")
        #expect(try alice.request("annotation.add", ["annotation": .point("pin", 1, 2)])["type"]?.string == "ack")

        #expect(try alice.request("drag", ["id": .string("pin"), "state": .string("starting")])["type"]?.string == "ack")
        let refused = try bob.request("drag", ["id": .string("pin"), "state": .string("starting")])
        #expect(refused["type"]?.string == "error")
        #expect(refused["code"]?.string == "drag_conflict")
        #expect(refused["holder"]?["name"]?.string == "Alice")

        try alice.request("drag", ["id": .string("pin"), "state": .string("dragging"), "coordinate": .coordinate(5, 6)])
        try alice.request("drag", ["id": .string("pin"), "state": .string("ending")])
        let none = try bob.waitFor { $0["type"]?.string == "drag" && $0["state"]?.string == "none" }
        #expect(none["coordinate"] == .coordinate(5, 6))
    }

    @Test(arguments: [1, 4]) func holderDisconnectCancelsAndRestores(threads: Int) throws {
        let server = try MemoryServer(threads: threads)
        let alice = try server.joined("s", name: "Alice")
        let bob = try server.joined("s", name: "Bob")
        try alice.request("annotation.add", ["annotation": .point("pin", 1, 2)])
        try bob.request("drag", ["id": .string("pin"), "state": .string("starting")])
        try bob.request("drag", ["id": .string("pin"), "state": .string("dragging"), "coordinate": .coordinate(7, 8)])
        bob.disconnect()
        let canceling = try alice.waitFor { $0["type"]?.string == "drag" && $0["state"]?.string == "canceling" }
        #expect(canceling["reason"]?.string == "holder_left")
        #expect(canceling["coordinate"] == .coordinate(1, 2))
        let left = try alice.next("participant.left").message
        #expect(left["reason"]?.string == "disconnected")
    }

    @Test(arguments: [1, 4]) func idleLeaseExpires(threads: Int) throws {
        let server = try MemoryServer(threads: threads) { $0.sessionDefaults.leaseTimeout = .milliseconds(200) }
        let alice = try server.joined("s", name: "Alice")
        try alice.request("annotation.add", ["annotation": .point("pin", 1, 2)])
        try alice.request("drag", ["id": .string("pin"), "state": .string("starting")])
        server.tick()
        #expect(!alice.peek().contains { $0["type"]?.string == "drag" && $0["state"]?.string == "canceling" }, "the lease ended before its time")
        server.advance(by: .milliseconds(200))
        server.tick()
        let canceled = try alice.waitFor { $0["type"]?.string == "drag" && $0["state"]?.string == "canceling" }
        #expect(canceled["reason"]?.string == "lease_expired")
    }
}
