import MeridianCore
import MeridianProtocol
@testable import MeridianServer
import MeridianTransport
import Testing

/// A member whose join asked for `handover` is moved in place when its session moves to another
/// node: it stays connected, is told (`moved`), and is joined again by its edge, which answers
/// with the new epoch's snapshot. Nodes in memory (``MemoryCluster``), every step the test's.
@Suite("Handover of members in place, in memory")
struct InMemoryHandoverTests {
    typealias Cluster = InMemoryClusterTests

    static func handoverJoin(_ session: String, _ name: String) -> [String: JSONValue] {
        var join = Cluster.join(session, name)
        join["handover"] = true
        return join
    }

    /// The messages of `connection` up to and with the first of type `type`.
    static func through(_ type: String, _ messages: [JSONValue]) -> [JSONValue] {
        guard let index = messages.firstIndex(where: { $0["type"]?.string == type }) else { return messages }
        return Array(messages[...index])
    }

    /// The owner stops: a member elsewhere that asked for handover is moved in place, with every
    /// acknowledged change in the new epoch's snapshot, and writes on at once; a member that did
    /// not ask is closed with 4012 as before.
    @Test func whenTheOwnerStopsAMemberThatAskedForHandoverIsJoinedAgainInPlace() throws {
        let cluster = try MemoryCluster(nodes: 2)
        let (a, b) = (cluster.nodes[0], cluster.nodes[1])
        let first = a.connect(to: 0), second = b.connect(to: 0), third = b.connect(to: 0)
        try cluster.request("join", Cluster.join("harbour", "first"), on: 0, from: first)
        let joinRef = b.post("join", Self.handoverJoin("harbour", "second"), from: second)
        let joined = try cluster.answer(joinRef, on: 1, to: second)
        #expect(joined["type"]?.string == "welcome", "\(joined)")
        let epoch = try #require(joined["epoch"]?.string)
        try cluster.request("join", Cluster.join("harbour", "third"), on: 1, from: third)
        #expect(try cluster.request("annotation.add", ["annotation": Cluster.point("pin")], on: 0, from: first)["type"]?.string == "ack")
        cluster.settle()
        _ = b.drain(second)

        cluster.stop(node: 0)
        cluster.keep()
        #expect(b.closeCode(of: third) == CloseCode.sessionMoved)
        #expect(b.closeCode(of: second) == nil)
        let moved = try cluster.answer(joinRef, on: 1, to: second)
        #expect(moved["type"]?.string == "moved", "\(moved)")
        #expect(moved["session"]?.string == "harbour")
        #expect((moved["reason"]?.string ?? "").isEmpty == false)
        let welcome = try cluster.answer(joinRef, on: 1, to: second)
        #expect(welcome["type"]?.string == "welcome", "\(welcome)")
        #expect(welcome["resumed"]?.bool == false)
        #expect(welcome["epoch"]?.string != epoch)
        #expect(welcome["snapshot"]?["annotations"]?.array?.map { $0["id"]?.string } == ["pin"])
        // The participants of the new epoch: this member alone (the others left with the old one).
        #expect(welcome["snapshot"]?["participants"]?.array?.count == 1, "\(welcome)")
        #expect(b.closeCode(of: second) == nil)

        #expect(try cluster.request("annotation.add", ["annotation": Cluster.point("quay")], on: 1, from: second)["type"]?.string == "ack")
        let leases = SessionLeases(store: cluster.clients[1], node: 0, ttl: .seconds(2))
        #expect(try leases.holders(["harbour"])["harbour"] == Lease(node: cluster.members[1].number, fence: 2))
        #expect(Cluster.ids(try cluster.store.load("harbour")?.record) == ["pin", "quay"])
    }

    /// The owner's lease runs out while it still serves (its keeper never ran): the other node
    /// moves its member in place and takes the session. A change the old owner applied just
    /// before, whose event was still on its way, must not reach the moved member after `moved`:
    /// it belongs to the old epoch, and the new snapshot already holds what was stored.
    @Test func framesTheOldOwnerSentBeforeLettingTheMemberGoAreNotDeliveredAfterTheMove() throws {
        let cluster = try MemoryCluster(nodes: 2, leaseTTL: .seconds(60))
        let (a, b) = (cluster.nodes[0], cluster.nodes[1])
        let first = a.connect(to: 0), second = b.connect(to: 0)
        try cluster.request("join", Cluster.join("harbour", "first"), on: 0, from: first)
        let joinRef = b.post("join", Self.handoverJoin("harbour", "second"), from: second)
        #expect(try cluster.answer(joinRef, on: 1, to: second)["type"]?.string == "welcome")
        cluster.settle()
        _ = b.drain(second)

        // The old owner applies a change; its event for the member at b is published, not yet
        // delivered, when b sees the lease gone.
        let late = a.post("annotation.add", ["annotation": Cluster.point("late")], from: first)
        #expect(try a.answer(late, to: first)["type"]?.string == "ack")
        cluster.broker.advance(by: .milliseconds(60_001))
        cluster.members[1].keepOnce()
        cluster.settle()
        // A request sent after the move waits behind the join made for the member: its answer
        // comes after the welcome.
        let ping = b.post("ping", from: second)
        #expect(try cluster.answer(ping, on: 1, to: second)["type"]?.string == "ack")

        let messages = b.drain(second)
        let types = messages.compactMap { $0["type"]?.string }
        let movedAt = try #require(types.firstIndex(of: "moved"), "\(types)")
        let after = Array(messages[(movedAt + 1)...])
        #expect(!after.contains { $0["type"]?.string == "annotation.added" }, "old-epoch event after the move: \(after)")
        let welcome = try #require(after.first { $0["type"]?.string == "welcome" }, "\(types)")
        #expect(welcome["ref"]?.string == joinRef)
        #expect(welcome["snapshot"]?["annotations"]?.array?.map { $0["id"]?.string } == ["late"])
        #expect(b.closeCode(of: second) == nil)
        #expect(cluster.members[1].holds("harbour", fence: 2))
    }

    /// A member waiting for the answer to a leave when its session moves is closed with 4012: the
    /// join it asked for is not what it wants any more.
    @Test func aMemberWithALeaveInFlightIsClosedRatherThanJoinedAgain() throws {
        let cluster = try MemoryCluster(nodes: 2)
        let (a, b) = (cluster.nodes[0], cluster.nodes[1])
        let first = a.connect(to: 0), second = b.connect(to: 0)
        try cluster.request("join", Cluster.join("harbour", "first"), on: 0, from: first)
        #expect(try cluster.request("join", Self.handoverJoin("harbour", "second"), on: 1, from: second)["type"]?.string == "welcome")
        cluster.stop(node: 0)
        // The leave goes to the stopped owner, which never answers it.
        b.post("leave", from: second)
        cluster.keep()
        #expect(b.closeCode(of: second) == CloseCode.sessionMoved)
        #expect(!b.drain(second).contains { $0["type"]?.string == "moved" })
    }
}
