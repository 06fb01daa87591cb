import MeridianRedis
import MeridianTesting
import Testing

@testable import MeridianServer

/// What ``RedisBroker`` leaves in Redis: the keys of ``ClusterKeys``, in the form nodes of every
/// version read, so that they share one Redis. (The rules of leases and nodes are the broker
/// contract's: BrokerContractTests.)
@Suite struct SessionLeaseTests {
    let redis: RedisServerProcess
    let client: RedisClient

    init() throws {
        redis = try RedisServerProcess()
        client = RedisClient(address: RedisAddress(host: "127.0.0.1", port: redis.port))
    }

    @Test func leasesNodesAndTheOverviewAreKeptInTheKeysOfClusterKeys() throws {
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
