import MeridianRedis
import MeridianTesting
import Testing

@testable import MeridianServer

/// Session leases and node numbers against a real `redis-server`: two nodes' views of one Redis.
@Suite struct SessionLeaseTests {
    let redis: RedisServerProcess
    let client: RedisClient

    init() throws {
        redis = try RedisServerProcess()
        client = RedisClient(address: RedisAddress(host: "127.0.0.1", port: redis.port))
    }

    func leases(node: Int, ttl: Duration = .seconds(3)) -> SessionLeases {
        SessionLeases(redis: RedisClient(address: client.address), node: node, ttl: ttl)
    }

    @Test func theFirstNodeOwnsASessionAndTheOthersAreToldWho() throws {
        let a = leases(node: 1), b = leases(node: 2)
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
        let ttl = try #require(try client.call(["PTTL", ClusterKeys.lease("harbour")]).integer)
        #expect(ttl > 0 && ttl <= 3_000)
    }

    @Test func aNewOwnerTakesTheNextFenceAndTheOldOneLearnsItLostTheLease() throws {
        let a = leases(node: 1), b = leases(node: 2)
        guard case .granted(let first) = try a.acquire("harbour") else { Issue.record("no lease"); return }
        #expect(try a.renew(["harbour": first]).isEmpty)
        // The lease runs out (node 1 paused, say): Redis drops the key.
        _ = try client.call(["DEL", ClusterKeys.lease("harbour")])
        #expect(try b.acquire("harbour") == .granted(Lease(node: 2, fence: 2)))
        #expect(try a.renew(["harbour": first]) == ["harbour"])
        // Releasing a lease that is no longer yours leaves the owner's alone.
        try a.release("harbour", first)
        #expect(try a.holders(["harbour"]) == ["harbour": Lease(node: 2, fence: 2)])
        try b.release("harbour", Lease(node: 2, fence: 2))
        #expect(try a.holders(["harbour"]) == [:])
        #expect(try a.acquire("harbour") == .granted(Lease(node: 1, fence: 3)))
    }

    @Test func aLeaseThatIsNotRenewedExpires() throws {
        let a = leases(node: 1, ttl: .milliseconds(100)), b = leases(node: 2)
        guard case .granted = try a.acquire("harbour") else { Issue.record("no lease"); return }
        // Redis expires the key on its own clock: wait for that, bounded.
        let deadline = ContinuousClock.now + .seconds(5)
        while try !b.holders(["harbour"]).isEmpty, ContinuousClock.now < deadline {}
        #expect(try b.acquire("harbour") == .granted(Lease(node: 2, fence: 2)))
    }

    @Test func nodesTakeNewNumbersAndShowWhileAlive() throws {
        let registry = NodeRegistry(redis: client, ttl: .seconds(3))
        let first = try registry.register(address: "10.0.0.1:8080")
        let second = try registry.register(address: "10.0.0.2:8080")
        #expect(second == first + 1)
        #expect(try registry.live([first, second, second + 1]) == [first: "10.0.0.1:8080", second: "10.0.0.2:8080"])
        try registry.leave(first)
        #expect(try registry.live([first, second]) == [second: "10.0.0.2:8080"])
    }

    @Test func redisDownIsAnErrorNotACrash() throws {
        let a = leases(node: 1)
        redis.stop()
        let error = #expect(throws: RedisError.self) { try a.acquire("harbour") }
        #expect(error?.kind == .unreachable)
        try redis.start()
        #expect(try a.acquire("harbour") == .granted(Lease(node: 1, fence: 1)))
    }
}
