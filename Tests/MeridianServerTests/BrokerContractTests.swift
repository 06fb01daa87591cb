import MeridianRedis
import MeridianTesting
import Testing

@testable import MeridianServer

/// What the cluster relies on of its broker, held by both: ``MemoryBroker`` (its clock moved by
/// the test) and ``RedisBroker`` on a real `redis-server`. Nodes are numbered by hand here.
@Suite("Broker contract")
struct BrokerContractTests {
    @Test(arguments: BrokerKind.allCases)
    func oneNodeHoldsALeaseAndTheOthersAreToldWho(kind: BrokerKind) throws {
        let bench = try BrokerBench(kind)
        let a = SessionLeases(store: bench.node(), node: 1, ttl: .seconds(3))
        let b = SessionLeases(store: bench.node(), node: 2, ttl: .seconds(3))
        #expect(try a.acquire("harbour") == .granted(Lease(node: 1, fence: 1)))
        guard case .held(let lease, let remaining) = try b.acquire("harbour") else {
            Issue.record("node 2 took a lease node 1 holds")
            return
        }
        #expect(lease == Lease(node: 1, fence: 1))
        #expect(remaining > .zero && remaining <= .seconds(3))
        // The owner asking again keeps its fence; another session has its own counter.
        #expect(try a.acquire("harbour") == .granted(Lease(node: 1, fence: 1)))
        #expect(try b.acquire("quay") == .granted(Lease(node: 2, fence: 1)))
        #expect(try a.holders(["harbour", "quay", "none"]) == ["harbour": Lease(node: 1, fence: 1), "quay": Lease(node: 2, fence: 1)])
    }

    @Test(arguments: BrokerKind.allCases)
    func fencesOnlyGrowAcrossExpiryReleaseAndReacquire(kind: BrokerKind) throws {
        let bench = try BrokerBench(kind)
        let a = SessionLeases(store: bench.node(), node: 1, ttl: .milliseconds(200))
        let b = SessionLeases(store: bench.node(), node: 2, ttl: .seconds(3))
        guard case .granted(let first) = try a.acquire("harbour") else { Issue.record("no lease"); return }
        #expect(try a.renew(["harbour": first]).isEmpty)
        // Node 1 pauses: its lease runs out.
        bench.pass(.milliseconds(300))
        #expect(bench.eventually { (try? b.holders(["harbour"]).isEmpty) == true })
        #expect(try b.acquire("harbour") == .granted(Lease(node: 2, fence: 2)))
        // The old owner learns it lost the lease, cannot take it back, nor release the new one.
        #expect(try a.renew(["harbour": first]) == ["harbour"])
        guard case .held(let holder, _) = try a.acquire("harbour") else { Issue.record("node 1 took node 2's lease"); return }
        #expect(holder == Lease(node: 2, fence: 2))
        try a.release("harbour", first)
        #expect(try a.holders(["harbour"]) == ["harbour": Lease(node: 2, fence: 2)])
        try b.release("harbour", Lease(node: 2, fence: 2))
        #expect(try a.holders(["harbour"]) == [:])
        #expect(try a.acquire("harbour") == .granted(Lease(node: 1, fence: 3)))
    }

    @Test(arguments: BrokerKind.allCases)
    func aLeaseNotRenewedInTimeCannotBeRenewed(kind: BrokerKind) throws {
        let bench = try BrokerBench(kind)
        let a = SessionLeases(store: bench.node(), node: 1, ttl: .milliseconds(400))
        guard case .granted(let lease) = try a.acquire("harbour") else { Issue.record("no lease"); return }
        bench.pass(.milliseconds(200))
        #expect(try a.renew(["harbour": lease]).isEmpty)
        bench.pass(.milliseconds(300))
        // Renewed 200 ms in: still held 500 ms in.
        #expect(try a.holders(["harbour"]) == ["harbour": lease])
        bench.pass(.milliseconds(500))
        #expect(bench.eventually { (try? a.holders(["harbour"]).isEmpty) == true })
        #expect(try a.renew(["harbour": lease]) == ["harbour"])
        #expect(try a.acquire("harbour") == .granted(Lease(node: 1, fence: 2)))
    }

    @Test(arguments: BrokerKind.allCases)
    func aLeaseIsMovedPastAStoredFenceOnlyWhileItIsCurrent(kind: BrokerKind) throws {
        let bench = try BrokerBench(kind)
        let a = SessionLeases(store: bench.node(), node: 1, ttl: .seconds(3))
        guard case .granted(let lease) = try a.acquire("harbour") else { Issue.record("no lease"); return }
        // The store holds a write of fence 5 (the counter was lost since): the lease moves past it.
        let moved = try #require(try a.advance("harbour", lease, past: 5))
        #expect(moved == Lease(node: 1, fence: 6))
        #expect(try a.holders(["harbour"]) == ["harbour": moved])
        #expect(try a.advance("harbour", lease, past: 9) == nil, "a lease that is not current any more was moved")
        // Below the lease's fence nothing moves.
        #expect(try a.advance("harbour", moved, past: 2) == moved)
        try a.release("harbour", moved)
        #expect(try a.acquire("harbour") == .granted(Lease(node: 1, fence: 7)))
    }

    @Test(arguments: BrokerKind.allCases)
    func nodesTakeNewNumbersAndShowWhileAlive(kind: BrokerKind) throws {
        let bench = try BrokerBench(kind)
        let registry = NodeRegistry(directory: bench.node(), ttl: .seconds(1))
        let first = try registry.register(address: "10.0.0.1:8080")
        let second = try registry.register(address: "10.0.0.2:8080")
        #expect(second == first + 1)
        #expect(try registry.live([first, second, second + 1]) == [first: "10.0.0.1:8080", second: "10.0.0.2:8080"])
        try registry.leave(first)
        #expect(try registry.live([first, second]) == [second: "10.0.0.2:8080"])
        // Without heartbeats a node is not live any more.
        bench.pass(.milliseconds(1_200))
        #expect(bench.eventually { (try? registry.live([second]).isEmpty) == true })
    }

    @Test(arguments: BrokerKind.allCases)
    func everyNodeSharesItsPartOfTheOverview(kind: BrokerKind) throws {
        let bench = try BrokerBench(kind)
        let a = bench.node(), b = bench.node()
        #expect(try a.share("one", from: 1).map { "\($0.node)=\(String(decoding: $0.value, as: UTF8.self))" } == ["1=one"])
        let both = try b.share("two", from: 2).map { "\($0.node)=\(String(decoding: $0.value, as: UTF8.self))" }
        #expect(both.sorted() == ["1=one", "2=two"])
        try b.drop([1])
        #expect(try a.share("one again", from: 1).map(\.node).sorted() == [1, 2])
        try a.drop([1, 2])
        #expect(try a.share("three", from: 3).map(\.node) == [3])
    }

    @Test(arguments: BrokerKind.allCases)
    func aSubscriberHearsEachChannelInPublishOrder(kind: BrokerKind) throws {
        let bench = try BrokerBench(kind)
        let heard = HeardEvents()
        let subscriber = bench.node().subscriber { heard.record($0) }
        defer { subscriber.stop() }
        subscriber.subscribe("a")
        subscriber.subscribe("b")
        subscriber.waitUntilSubscribed("a")
        subscriber.waitUntilSubscribed("b")
        let publisher = bench.node().publisher { _, _ in }
        defer { publisher.stop() }
        var expected = ["connected"]
        for i in 0..<200 {
            let channel = i % 3 == 0 ? "b" : i % 3 == 1 ? "a" : "c"
            publisher.publish(Array("m\(i)".utf8), to: channel)
            if channel != "c" { expected.append("\(channel):m\(i)") }
        }
        #expect(bench.eventually { heard.all.count >= expected.count })
        #expect(heard.all == expected)
    }

    @Test(arguments: BrokerKind.allCases)
    func aNodesInboxIsHeardByThatNodeOnly(kind: BrokerKind) throws {
        let bench = try BrokerBench(kind)
        let one = HeardEvents(), two = HeardEvents()
        let first = bench.node().subscriber { one.record($0) }, second = bench.node().subscriber { two.record($0) }
        defer { first.stop(); second.stop() }
        first.subscribe(ClusterKeys.inbox(1))
        second.subscribe(ClusterKeys.inbox(2))
        first.waitUntilSubscribed(ClusterKeys.inbox(1))
        second.waitUntilSubscribed(ClusterKeys.inbox(2))
        let publisher = bench.node().publisher { _, _ in }
        defer { publisher.stop() }
        for i in 0..<5 {
            publisher.publish(Array("to 2 #\(i)".utf8), to: ClusterKeys.inbox(2))
            publisher.publish(Array("to 1 #\(i)".utf8), to: ClusterKeys.inbox(1))
        }
        #expect(bench.eventually { one.all.count == 6 && two.all.count == 6 })
        #expect(one.all == ["connected"] + (0..<5).map { "\(ClusterKeys.inbox(1)):to 1 #\($0)" })
        #expect(two.all == ["connected"] + (0..<5).map { "\(ClusterKeys.inbox(2)):to 2 #\($0)" })
    }

    /// Out of reach, calls fail as unreachable, subscribers hear it and publications are reported
    /// lost; after a restart without persistence everything starts again from nothing, and
    /// subscribers hear their channels again without asking.
    @Test(arguments: BrokerKind.allCases)
    func anOutageIsAnErrorAndARestartForgetsEverything(kind: BrokerKind) throws {
        let bench = try BrokerBench(kind)
        let leases = SessionLeases(store: bench.node(), node: 1, ttl: .seconds(3))
        let heard = HeardEvents(), lost = LostCount()
        let subscriber = bench.node().subscriber { heard.record($0) }
        let publisher = bench.node().publisher { count, _ in lost.add(count) }
        defer { subscriber.stop(); publisher.stop() }
        subscriber.subscribe("a")
        subscriber.waitUntilSubscribed("a")
        #expect(try leases.acquire("harbour") == .granted(Lease(node: 1, fence: 1)))
        #expect(try leases.acquire("quay") == .granted(Lease(node: 1, fence: 1)))

        bench.outage()
        let error = #expect(throws: BrokerError.self) { try leases.acquire("harbour") }
        #expect(error?.kind == .unreachable)
        #expect(throws: BrokerError.self) { try leases.holders(["harbour"]) }
        #expect(bench.eventually { heard.all.last == "disconnected" })
        publisher.publish(Array("while out".utf8), to: "a")
        #expect(bench.eventually { lost.value == 1 })

        try bench.restart()
        #expect(bench.eventually { heard.all.last == "connected" })
        #expect(try leases.holders(["harbour", "quay"]) == [:])
        // The counters went with the restart: the store's fences move the next owner past them.
        #expect(try leases.acquire("harbour") == .granted(Lease(node: 1, fence: 1)))
        publisher.publish(Array("after".utf8), to: "a")
        #expect(bench.eventually { heard.all.last == "a:after" })
        #expect(heard.all == ["connected", "disconnected", "connected", "a:after"])
    }

    /// What ``RedisBroker`` leaves in Redis: the keys of ``ClusterKeys``, in the form nodes of
    /// every version read, so that they share one Redis.
    @Test func redisKeepsLeasesNodesAndTheOverviewInTheKeysOfClusterKeys() throws {
        let redis = try RedisServerProcess()
        let client = RedisClient(address: RedisAddress(host: "127.0.0.1", port: redis.port))
        let broker = RedisBroker(redis: RedisClient(address: client.address))
        let leases = SessionLeases(store: broker, node: 7, ttl: .seconds(3))
        guard case .granted(let lease) = try leases.acquire("harbour") else { Issue.record("no lease"); return }
        #expect(lease == Lease(node: 7, fence: 1))
        #expect(try client.call(["GET", ClusterKeys.lease("harbour")]).text == "7 1")
        #expect(try client.call(["GET", ClusterKeys.fence("harbour")]).text == "1")
        let ttl = try #require(try client.call(["PTTL", ClusterKeys.lease("harbour")]).integer)
        #expect(ttl > 0 && ttl <= 3_000)

        let registry = NodeRegistry(directory: broker, ttl: .seconds(3))
        let number = try registry.register(address: "10.0.0.1:8080")
        #expect(try client.call(["GET", ClusterKeys.nodeCounter]).text == String(number))
        #expect(try client.call(["GET", ClusterKeys.node(number)]).text == "10.0.0.1:8080")

        _ = try broker.share("{}", from: number)
        #expect(try client.call(["HGET", ClusterKeys.overview, String(number)]).text == "{}")
    }
}
