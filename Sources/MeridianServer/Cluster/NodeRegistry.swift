import MeridianRedis

/// The nodes of a cluster, in Redis: each node takes a number when it starts (never reused)
/// and keeps a key alive with its address while it runs, so that the others can tell a live
/// owner from a dead one.
struct NodeRegistry: Sendable {
    let redis: RedisClient
    /// How long a node's key lasts without renewal.
    let ttl: Duration

    /// Takes a new node number and announces `address` under it.
    func register(address: String) throws(RedisError) -> Int {
        guard let number = try redis.call(["INCR", ClusterKeys.nodeCounter]).integer, number > 0 else {
            throw RedisError(.unexpected, "node registration: \(ClusterKeys.nodeCounter) is not a counter")
        }
        try heartbeat(Int(number), address: address)
        return Int(number)
    }

    /// Renews node `number`'s key.
    func heartbeat(_ number: Int, address: String) throws(RedisError) {
        let ms = ttl.components.seconds * 1000 + ttl.components.attoseconds / 1_000_000_000_000_000
        let reply = try redis.call(["SET", ClusterKeys.node(number), address, "PX", String(ms)])
        guard reply == .status("OK") else { throw RedisError(.unexpected, "node \(number) heartbeat: \(reply)") }
    }

    /// The live nodes and their addresses.
    func live(_ numbers: [Int]) throws(RedisError) -> [Int: String] {
        guard !numbers.isEmpty else { return [:] }
        let replies = try redis.pipeline(numbers.map { ["GET", ClusterKeys.node($0)].map { Array($0.utf8) } })
        var live: [Int: String] = [:]
        for (number, reply) in zip(numbers, replies) {
            if let address = reply.text { live[number] = address }
        }
        return live
    }

    /// Forgets node `number` (a node that stops).
    func leave(_ number: Int) throws(RedisError) {
        _ = try redis.call(["DEL", ClusterKeys.node(number)])
    }
}
