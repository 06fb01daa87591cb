import MeridianRedis

/// The ``Broker`` of a cluster in production: one Redis (``ClusterKeys`` names its keys and
/// channels). Calls go over one connection (``RedisClient``); each publisher and subscriber
/// has a connection and a thread of its own.
final class RedisBroker: Sendable {
    let redis: RedisClient
    /// How long a publisher or subscriber waits to connect, and for each read or write.
    let linkTimeout: Duration

    init(redis: RedisClient, linkTimeout: Duration = .seconds(2)) {
        self.redis = redis
        self.linkTimeout = linkTimeout
    }

    /// The broker of a node whose leases last `leaseTTL`: calls wait at most a quarter of it
    /// (and a second), links a quarter of it.
    convenience init(address: RedisAddress, leaseTTL: Duration) {
        self.init(redis: RedisClient(address: address, timeout: min(.seconds(1), leaseTTL / 4)), linkTimeout: leaseTTL / 4)
    }

    var address: RedisAddress { redis.address }

    static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
    }

    // The Redis client's calls, their failures as the broker's.

    private func call(_ command: [String]) throws(BrokerError) -> RedisReply {
        do { return try redis.call(command) } catch { throw BrokerError(error) }
    }

    private func eval(_ script: String, keys: [String], arguments: [String]) throws(BrokerError) -> RedisReply {
        do { return try redis.eval(script, keys: keys, arguments: arguments) } catch { throw BrokerError(error) }
    }

    private func pipeline(_ commands: [[[UInt8]]]) throws(BrokerError) -> [RedisReply] {
        do { return try redis.pipeline(commands) } catch { throw BrokerError(error) }
    }
}

extension BrokerError {
    /// A Redis client's failure: its kinds are the broker's.
    init(_ error: RedisError) {
        switch error.kind {
        case .unreachable: self.init(.unreachable, error.message)
        case .replied: self.init(.refused, error.message)
        case .unexpected: self.init(.unexpected, error.message)
        }
    }
}

extension ChannelEvent {
    init(_ event: RedisSubscriber.Event) {
        switch event {
        case .message(let channel, let payload): self = .message(channel: channel, payload: payload)
        case .connected: self = .connected
        case .disconnected(let error): self = .disconnected(BrokerError(error))
        case .subscribed(let channel): self = .subscribed(channel: channel)
        }
    }
}

extension RedisPublisher: ChannelPublisher {}
extension RedisSubscriber: ChannelSubscriber {}

// MARK: Leases

extension RedisBroker: LeaseStore {
    func acquire(_ session: String, node: Int, ttl: Duration) throws(BrokerError) -> SessionLeases.Answer {
        let reply = try eval(Self.acquireScript, keys: [ClusterKeys.lease(session), ClusterKeys.fence(session)],
                                   arguments: [String(node), String(Self.milliseconds(ttl))])
        guard let parts = reply.elements, parts.count == 3, let granted = parts[0].integer, let value = parts[1].text,
              let lease = Lease(value: value), let remaining = parts[2].integer
        else { throw Self.unexpected(reply, "acquire", session) }
        return granted == 1 ? .granted(lease) : .held(lease, remaining: .milliseconds(max(0, remaining)))
    }

    func renew(_ leases: [String: Lease], ttl: Duration) throws(BrokerError) -> Set<String> {
        guard !leases.isEmpty else { return [] }
        let sessions = Array(leases.keys)
        let ms = String(Self.milliseconds(ttl))
        let replies = try pipeline(sessions.map { session in
            ["EVAL", Self.renewScript, "1", ClusterKeys.lease(session), leases[session]!.value, ms].map { Array($0.utf8) }
        })
        var lost: Set<String> = []
        for (session, reply) in zip(sessions, replies) where reply.integer != 1 {
            if case .error = reply { throw Self.unexpected(reply, "renew", session) }
            lost.insert(session)
        }
        return lost
    }

    func advance(_ session: String, _ lease: Lease, node: Int, past stored: UInt64) throws(BrokerError) -> Lease? {
        let reply = try eval(Self.advanceScript, keys: [ClusterKeys.lease(session), ClusterKeys.fence(session)],
                                   arguments: [lease.value, String(node), String(stored)])
        guard let fence = reply.integer else { throw Self.unexpected(reply, "advance", session) }
        return fence > 0 ? Lease(node: node, fence: UInt64(fence)) : nil
    }

    func release(_ session: String, _ lease: Lease) throws(BrokerError) {
        _ = try eval(Self.releaseScript, keys: [ClusterKeys.lease(session)], arguments: [lease.value])
    }

    func holders(_ sessions: [String]) throws(BrokerError) -> [String: Lease] {
        guard !sessions.isEmpty else { return [:] }
        let replies = try pipeline(sessions.map { ["GET", ClusterKeys.lease($0)].map { Array($0.utf8) } })
        var holders: [String: Lease] = [:]
        for (session, reply) in zip(sessions, replies) {
            if case .error = reply { throw Self.unexpected(reply, "read", session) }
            holders[session] = reply.text.flatMap(Lease.init(value:))
        }
        return holders
    }

    private static func unexpected(_ reply: RedisReply, _ action: String, _ session: String) -> BrokerError {
        if case .error(let message) = reply { return BrokerError(.refused, "lease \(action) of session \(session): \(message)") }
        return BrokerError(.unexpected, "lease \(action) of session \(session): unexpected reply \(reply)")
    }

    /// KEYS: lease, fence. ARGV: node, ttl ms. Returns {granted, "NODE FENCE", remaining ms}.
    static let acquireScript = """
        local value = redis.call('GET', KEYS[1])
        if not value then
            local fence = redis.call('INCR', KEYS[2])
            value = ARGV[1] .. ' ' .. fence
            redis.call('SET', KEYS[1], value, 'PX', ARGV[2])
            return {1, value, tonumber(ARGV[2])}
        end
        if string.match(value, '^(%S+)') == ARGV[1] then
            redis.call('PEXPIRE', KEYS[1], ARGV[2])
            return {1, value, tonumber(ARGV[2])}
        end
        return {0, value, redis.call('PTTL', KEYS[1])}
        """

    /// KEYS: lease, fence. ARGV: "NODE FENCE", node, stored fence. The lease's new fence, 0 if
    /// the lease is not that one.
    static let advanceScript = """
        if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
        local fence = tonumber(redis.call('GET', KEYS[2]) or '0')
        if fence <= tonumber(ARGV[3]) then fence = tonumber(ARGV[3]) + 1 else fence = redis.call('INCR', KEYS[2]) end
        redis.call('SET', KEYS[2], fence)
        redis.call('SET', KEYS[1], ARGV[2] .. ' ' .. fence, 'KEEPTTL')
        return fence
        """

    /// KEYS: lease. ARGV: "NODE FENCE", ttl ms. 1 if renewed, 0 if the lease is not that one.
    static let renewScript = """
        if redis.call('GET', KEYS[1]) == ARGV[1] then
            return redis.call('PEXPIRE', KEYS[1], ARGV[2])
        end
        return 0
        """

    /// KEYS: lease. ARGV: "NODE FENCE". 1 if released.
    static let releaseScript = """
        if redis.call('GET', KEYS[1]) == ARGV[1] then
            return redis.call('DEL', KEYS[1])
        end
        return 0
        """
}

// MARK: Nodes

extension RedisBroker: NodeDirectory {
    func register() throws(BrokerError) -> Int {
        guard let number = try call(["INCR", ClusterKeys.nodeCounter]).integer, number > 0 else {
            throw BrokerError(.unexpected, "node registration: \(ClusterKeys.nodeCounter) is not a counter")
        }
        return Int(number)
    }

    func heartbeat(_ node: Int, address: String, ttl: Duration) throws(BrokerError) {
        let reply = try call(["SET", ClusterKeys.node(node), address, "PX", String(Self.milliseconds(ttl))])
        guard reply == .status("OK") else { throw BrokerError(.unexpected, "node \(node) heartbeat: \(reply)") }
    }

    func live(_ nodes: [Int]) throws(BrokerError) -> [Int: String] {
        guard !nodes.isEmpty else { return [:] }
        let replies = try pipeline(nodes.map { ["GET", ClusterKeys.node($0)].map { Array($0.utf8) } })
        var live: [Int: String] = [:]
        for (number, reply) in zip(nodes, replies) {
            if let address = reply.text { live[number] = address }
        }
        return live
    }

    func leave(_ node: Int) throws(BrokerError) {
        _ = try call(["DEL", ClusterKeys.node(node)])
    }
}

// MARK: Overview

extension RedisBroker: OverviewParts {
    func share(_ part: String, from node: Int) throws(BrokerError) -> [(node: Int, value: [UInt8])] {
        let replies = try pipeline([
            ["HSET", ClusterKeys.overview, String(node), part], ["HGETALL", ClusterKeys.overview],
        ].map { $0.map { Array($0.utf8) } })
        let fields = replies[1].elements ?? []
        var parts: [(node: Int, value: [UInt8])] = []
        for pair in stride(from: 0, to: fields.count - 1, by: 2) {
            guard let node = fields[pair].text.flatMap(Int.init), case .string(let value) = fields[pair + 1] else { continue }
            parts.append((node, value))
        }
        return parts
    }

    func drop(_ nodes: [Int]) throws(BrokerError) {
        guard !nodes.isEmpty else { return }
        _ = try call(["HDEL", ClusterKeys.overview] + nodes.map(String.init))
    }
}

// MARK: Channels

extension RedisBroker: ChannelBus {
    func publisher(onLost: @escaping @Sendable (Int, BrokerError) -> Void) -> any ChannelPublisher {
        RedisPublisher(address: redis.address, timeout: linkTimeout) { messages, error in onLost(messages.count, BrokerError(error)) }
    }

    func subscriber(_ handler: @escaping @Sendable (ChannelEvent) -> Void) -> any ChannelSubscriber {
        RedisSubscriber(address: redis.address, timeout: linkTimeout) { handler(ChannelEvent($0)) }
    }
}
