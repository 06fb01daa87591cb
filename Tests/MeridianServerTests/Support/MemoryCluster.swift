import Dispatch
import Logging
import MeridianCore
import MeridianRedis
import MeridianStorage
@testable import MeridianServer
import MeridianTransport

/// Nodes of a cluster in memory: each node's hubs are ``MemoryHubs``, its ``ClusterNode`` is on
/// one ``MemoryBroker`` (a client each, with the faults the test sets), and they share one
/// in-memory store, as the nodes of a cluster share PostgreSQL. Nothing runs by itself: the
/// test settles the hubs and the broker's deliveries, moves the broker's clock, and runs the
/// keepers' rounds (``keep()``).
final class MemoryCluster {
    let broker = MemoryBroker()
    let store = InMemorySessionStore()
    /// Each node's hubs, cluster node and broker client, by index (node numbers start at 1).
    private(set) var nodes: [MemoryHubs] = []
    private(set) var members: [ClusterNode] = []
    private(set) var clients: [MemoryBroker.Client] = []
    private let workArrived = DispatchSemaphore(value: 0)

    init(nodes count: Int, hubs: Int = 1, leaseTTL: Duration = .seconds(2)) throws {
        var configuration = ServerConfiguration()
        configuration.rateLimit = .unlimited
        configuration.storage.store = store
        let cluster = ClusterConfiguration(redis: RedisAddress(host: "memory"), leaseTTL: leaseTTL)
        var logger = Logger(label: "memory-cluster")
        logger.logLevel = .critical
        for _ in 0..<count {
            let client = broker.client(), board = OverviewBoard()
            let node = ClusterNode(configuration: cluster, broker: client, hubs: hubs, board: board, logger: logger)
            guard node.join() else { throw MemoryHubError.noAnswer("node \(members.count + 1) could not join") }
            clients.append(client)
            members.append(node)
            nodes.append(try MemoryHubs(count: hubs, configuration: configuration, node: node, board: board, workArrived: workArrived))
        }
        settle()
    }

    deinit { for node in members { node.stop() } }

    /// Runs every node's relayed messages and handed-back work, and the broker's deliveries,
    /// until none is left.
    func settle() {
        var ran = true
        while ran {
            ran = false
            for node in nodes where node.settle() { ran = true }
            if broker.deliver() > 0 { ran = true }
        }
    }

    /// Sends a request from `connection` on node `node` and returns its answer, settling every
    /// node until it comes.
    @discardableResult
    func request(_ type: String, _ fields: [String: JSONValue] = [:], on node: Int, from connection: ConnectionID) throws -> JSONValue {
        try answer(nodes[node].post(type, fields, from: connection), on: node, to: connection)
    }

    func answer(_ ref: String, on node: Int, to connection: ConnectionID) throws -> JSONValue {
        while true {
            settle()
            if let answer = nodes[node].take(ref, to: connection) { return answer }
            guard workArrived.wait(timeout: .now() + .seconds(5)) == .success else { throw MemoryHubError.noAnswer(ref) }
            workArrived.signal()
        }
    }

    /// One round of every node's keeper (renewals, owners looked at, nodes gone), then settles.
    func keep() {
        for node in members { node.keepOnce() }
        settle()
    }
}
