import MeridianCore
import MeridianProtocol
@testable import MeridianServer
import MeridianTransport
import Testing

/// Nodes of a cluster in memory (``MemoryCluster``): no Redis, no sockets, the broker's clock
/// moved by the test. What the live cluster tests show through redis-server, shown here with
/// every step the test's.
@Suite("Cluster nodes, in memory")
struct InMemoryClusterTests {
    static func join(_ session: String, _ name: String, role: String = "editor") -> [String: JSONValue] {
        ["session": .string(session), "name": .string(name), "role": .string(role)]
    }

    static func point(_ id: String) -> JSONValue {
        ["type": "point", "id": .string(id), "coordinate": ["latitude": 52, "longitude": 13], "draggable": true]
    }

    static func ids(_ record: SessionRecord?) -> [String] { (record?.annotations ?? []).map(\.id).sorted() }

    /// Members on two nodes, their requests crossing: both see the owner's one order.
    @Test func membersOnTwoNodesSeeOneOrder() throws {
        let cluster = try MemoryCluster(nodes: 2)
        let (a, b) = (cluster.nodes[0], cluster.nodes[1])
        let first = a.connect(to: 0), second = b.connect(to: 0)
        let welcome = try cluster.request("join", Self.join("harbour", "first"), on: 0, from: first)
        #expect(welcome["type"]?.string == "welcome", "\(welcome)")
        let joined = try cluster.request("join", Self.join("harbour", "second"), on: 1, from: second)
        // The second joined through node 2, served by node 1, the session's owner.
        #expect(joined["snapshot"]?["participants"]?.array?.count == 2, "\(joined)")
        #expect(cluster.members[1].gateway.owner(of: "harbour") == cluster.members[0].number)

        // Requests leave both nodes before any answer comes back.
        var refs: [(node: Int, connection: ConnectionID, ref: String)] = []
        for i in 0..<10 {
            refs.append((0, first, a.post("annotation.add", ["annotation": Self.point("a\(i)")], from: first)))
            refs.append((1, second, b.post("annotation.add", ["annotation": Self.point("b\(i)")], from: second)))
        }
        for (node, connection, ref) in refs {
            #expect(try cluster.answer(ref, on: node, to: connection)["type"]?.string == "ack")
        }
        cluster.settle()
        let added = { (messages: [JSONValue]) in
            messages.filter { $0["type"]?.string == "annotation.added" }.map { "\($0["seq"]?.number ?? 0) \($0["annotation"]?["id"]?.string ?? "")" }
        }
        let seenAtA = added(a.drain(first)), seenAtB = added(b.drain(second))
        #expect(seenAtA.count == 20)
        #expect(seenAtA == seenAtB)
    }

    /// The owner is cut off from the broker: its lease runs out on the broker's clock, the member
    /// on the other node is closed with 4012 and joins again there, under the next fence, with
    /// every stored change; the old owner, still serving its own member (the lease time is long
    /// by the wall clock, so its lease watch does not stop it first), has its writes refused by
    /// the store once the new owner has written under its fence.
    @Test func whenTheOwnerIsCutOffTheOtherNodeTakesOverAndTheOldOwnersWritesAreFenced() throws {
        let cluster = try MemoryCluster(nodes: 2, leaseTTL: .seconds(60))
        let (a, b) = (cluster.nodes[0], cluster.nodes[1])
        let first = a.connect(to: 0), second = b.connect(to: 0)
        try cluster.request("join", Self.join("harbour", "first"), on: 0, from: first)
        try cluster.request("join", Self.join("harbour", "second"), on: 1, from: second)
        #expect(try cluster.request("annotation.add", ["annotation": Self.point("pin")], on: 1, from: second)["type"]?.string == "ack")
        let leases = SessionLeases(store: cluster.clients[1], node: 0, ttl: .seconds(60))
        #expect(try leases.holders(["harbour"])["harbour"] == Lease(node: cluster.members[0].number, fence: 1))

        cluster.clients[0].cut()
        cluster.settle()
        cluster.keep()
        // Past the lease time by the broker's clock (no wall time waited): the lease is gone.
        cluster.broker.advance(by: .milliseconds(60_001))
        #expect(try leases.holders(["harbour"]).isEmpty)
        cluster.keep()
        #expect(b.closeCode(of: second) == CloseCode.sessionMoved)

        b.disconnect(second)
        let again = b.connect(to: 0)
        let welcome = try cluster.request("join", Self.join("harbour", "second"), on: 1, from: again)
        #expect(welcome["type"]?.string == "welcome", "\(welcome)")
        #expect(welcome["snapshot"]?["annotations"]?.array?.map { $0["id"]?.string } == ["pin"])
        #expect(try leases.holders(["harbour"])["harbour"] == Lease(node: cluster.members[1].number, fence: 2))

        #expect(try cluster.request("annotation.add", ["annotation": Self.point("quay")], on: 1, from: again)["type"]?.string == "ack")
        // The old owner still hosts the session for its own member: what it applies now is refused
        // by the store, which holds the new owner's fence.
        let late = try cluster.request("annotation.add", ["annotation": Self.point("late")], on: 0, from: first)
        #expect(late["type"]?.string == "error" && late["code"]?.string == "storage_unavailable", "\(late)")
        let stored = try cluster.store.load("harbour")
        #expect(Self.ids(stored?.record) == ["pin", "quay"])
        #expect(stored?.fence == 2)
    }

    /// The owner stops: the lease goes with it, the member on the other node is closed with 4012
    /// once its node sees the owner gone, joins again there, and finds every acknowledged change
    /// in a snapshot under a new epoch, with the next fencing number.
    @Test func whenTheOwnerStopsAMemberElsewhereJoinsAgainAtANewOwner() throws {
        let cluster = try MemoryCluster(nodes: 2)
        let (a, b) = (cluster.nodes[0], cluster.nodes[1])
        let first = a.connect(to: 0), second = b.connect(to: 0)
        try cluster.request("join", Self.join("harbour", "first"), on: 0, from: first)
        let joined = try cluster.request("join", Self.join("harbour", "second"), on: 1, from: second)
        let epoch = try #require(joined["snapshot"]?["epoch"]?.string ?? joined["epoch"]?.string)
        let acked = try cluster.request("annotation.add", ["annotation": Self.point("pin")], on: 0, from: first)
        #expect(acked["type"]?.string == "ack")

        cluster.stop(node: 0)
        #expect(b.closeCode(of: second) == nil, "closed before its node looked at the owner")
        cluster.keep()
        #expect(b.closeCode(of: second) == CloseCode.sessionMoved)

        b.disconnect(second)
        let again = b.connect(to: 0)
        var rejoin = Self.join("harbour", "second")
        rejoin["resume"] = ["epoch": .string(epoch), "seq": acked["seq"]!]
        let welcome = try cluster.request("join", rejoin, on: 1, from: again)
        #expect(welcome["resumed"]?.bool == false, "\(welcome)")
        let snapshot = try #require(welcome["snapshot"])
        #expect(snapshot["annotations"]?.array?.map { $0["id"]?.string } == ["pin"])
        #expect((snapshot["epoch"]?.string ?? welcome["epoch"]?.string) != epoch)
        let leases = SessionLeases(store: cluster.clients[1], node: 0, ttl: .seconds(2))
        #expect(try leases.holders(["harbour"])["harbour"] == Lease(node: cluster.members[1].number, fence: 2))
    }

    /// The node that took a session over hears late that the old owner held it (two loads'
    /// answers crossed: one read the lease before it ran out, the other took it after). It goes
    /// on serving the session's joins itself, and its keeper forgets an owner heard of for a
    /// session whose lease it renews; kept, the joins would go to a node that sends them back.
    @Test func theOwnerServesItsSessionWhateverFormerOwnerItHearsOfLate() throws {
        let cluster = try MemoryCluster(nodes: 2)
        let b = cluster.nodes[1]
        let (owner, former) = (cluster.members[1], cluster.members[0].number)
        try cluster.request("join", Self.join("harbour", "first"), on: 1, from: b.connect(to: 0))

        owner.heard("harbour", heldBy: former)
        try #require(owner.gateway.owner(of: "harbour") == nil, "an old answer taken for the owner")
        let second = try cluster.request("join", Self.join("harbour", "second"), on: 1, from: b.connect(to: 0))
        #expect(second["snapshot"]?["participants"]?.array?.count == 2, "\(second)")

        owner.gateway.learnOwner("harbour", is: former)
        cluster.keep()
        try #require(owner.gateway.owner(of: "harbour") == nil, "the keeper kept an owner for a session whose lease it renews")
        let third = try cluster.request("join", Self.join("harbour", "third"), on: 1, from: b.connect(to: 0))
        #expect(third["snapshot"]?["participants"]?.array?.count == 3, "\(third)")
    }

    /// A dashboard on any node sees every node's sessions, each with the node that owns it.
    @Test func theOverviewListsEveryNodesSessionsWithTheirOwner() throws {
        let cluster = try MemoryCluster(nodes: 2, advertise: ["node-a:8080", "node-b:8080"])
        let (a, b) = (cluster.nodes[0], cluster.nodes[1])
        let atA = a.connect(to: 0), atB = b.connect(to: 0), dashboard = b.connect(to: 0)
        try cluster.request("join", Self.join("harbour", "first"), on: 0, from: atA)
        try cluster.request("join", Self.join("quay", "second"), on: 1, from: atB)
        #expect(try cluster.request("overview.watch", on: 1, from: dashboard)["type"]?.string == "ack")
        // Each hub posts its part, the nodes share theirs through the broker, and a second later
        // each hub sends the whole to its watchers.
        cluster.tick(by: .zero)
        cluster.keep()
        cluster.tick(by: .seconds(1))
        let overview = try #require(b.drain(dashboard).last { $0["type"]?.string == "overview" })
        let owners = Dictionary(uniqueKeysWithValues: (overview["sessions"]?.array ?? []).map { ($0["session"]?.string ?? "", $0["node"]?.string ?? "") })
        #expect(owners == ["harbour": "node-a:8080", "quay": "node-b:8080"], "\(overview)")
        #expect(overview["connections"]?.number == 3)
    }

    /// A join loads its session: the node takes the lease, and while the session is read the
    /// lease runs out and the keeper gives it up. The load must not open the session (nobody
    /// would renew its lease, and another node could take it while this one served a stale
    /// copy): the join is refused with `storage_unavailable`, and the next one takes the lease
    /// again and is served.
    @Test func aSessionWhoseLeaseWasGivenUpWhileItLoadedIsNotOpened() throws {
        let store = GatedLoadStore(gating: "harbour")
        let cluster = try MemoryCluster(nodes: 1, store: store)
        let a = cluster.nodes[0], node = cluster.members[0]
        let first = a.connect(to: 0)
        let ref = a.post("join", Self.join("harbour", "first"), from: first)
        #expect(store.loadStarted.wait(timeout: 10), "the load never started")
        #expect(node.figures.leases == 1)
        // The lease runs out in the broker before the keeper renews it: the renewal finds it lost.
        cluster.broker.advance(by: .seconds(3))
        cluster.keep()
        #expect(node.figures.leases == 0)
        store.open()
        let refused = try cluster.answer(ref, on: 0, to: first)
        #expect(refused["code"]?.string == "storage_unavailable", "\(refused)")
        #expect((refused["message"]?.string ?? "").contains("lost while it loaded"), "\(refused)")
        #expect(a.hubs[0].sessions["harbour"] == nil)

        let welcome = try cluster.request("join", Self.join("harbour", "first"), on: 0, from: first)
        #expect(welcome["type"]?.string == "welcome", "\(welcome)")
        #expect(node.figures.leases == 1)
        #expect(node.holds("harbour", fence: 2))
    }
}

