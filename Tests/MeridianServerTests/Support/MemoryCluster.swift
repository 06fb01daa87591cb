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
    let store: any SessionStore
    /// Each node's hubs, cluster node and broker client, by index (node numbers start at 1).
    private(set) var nodes: [MemoryHubs] = []
    private(set) var members: [ClusterNode] = []
    private(set) var clients: [MemoryBroker.Client] = []
    private let workArrived = DispatchSemaphore(value: 0)

    /// Nodes given a stop (``stop(node:)``): their keeper runs no more.
    private var stopped: Set<Int> = []

    /// `advertise`: each node's address in the overview, by index (none by default).
    init(nodes count: Int, hubs: Int = 1, leaseTTL: Duration = .seconds(2), advertise: [String] = [],
         store: any SessionStore = InMemorySessionStore()) throws {
        self.store = store
        var configuration = ServerConfiguration()
        configuration.rateLimit = .unlimited
        configuration.storage.store = store
        var logger = Logger(label: "memory-cluster")
        logger.logLevel = .critical
        for index in 0..<count {
            let cluster = ClusterConfiguration(redis: RedisAddress(host: "memory"), leaseTTL: leaseTTL,
                                               advertise: index < advertise.count ? advertise[index] : "")
            let client = broker.client(), board = OverviewBoard()
            let node = ClusterNode(configuration: cluster, broker: client, hubs: hubs, board: board, logger: logger)
            guard node.join() else { throw MemoryHubError.noAnswer("node \(members.count + 1) could not join") }
            clients.append(client)
            members.append(node)
            nodes.append(try MemoryHubs(count: hubs, configuration: configuration, node: node, board: board, workArrived: workArrived))
        }
        settle()
    }

    deinit { for (index, node) in members.enumerated() where !stopped.contains(index) { node.stop() } }

    /// Stops node `node` as a server stops: its leases given up, gone from the cluster.
    func stop(node: Int) {
        stopped.insert(node)
        members[node].stop()
        settle()
    }

    /// Moves every node's clock on by `duration`, runs every hub's periodic work, and settles.
    func tick(by duration: Duration) {
        for node in nodes {
            for outbound in node.outbounds { outbound.advance(by: duration) }
            node.tick()
        }
        settle()
    }

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
        for (index, node) in members.enumerated() where !stopped.contains(index) { node.keepOnce() }
        settle()
    }
}
