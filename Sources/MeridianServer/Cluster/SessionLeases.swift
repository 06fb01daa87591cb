import MeridianRedis

/// Who owns a session: a node, and the fencing number it took the lease with.
struct Lease: Hashable, Sendable, CustomStringConvertible {
    var node: Int
    var fence: UInt64

    /// The lease's value in Redis: `"NODE FENCE"`.
    var value: String { "\(node) \(fence)" }

    init(node: Int, fence: UInt64) {
        self.node = node
        self.fence = fence
    }

    init?(value: String) {
        let parts = value.split(separator: " ")
        guard parts.count == 2, let node = Int(parts[0]), let fence = UInt64(parts[1]) else { return nil }
        self.init(node: node, fence: fence)
    }

    var description: String { "node \(node) (fence \(fence))" }
}

/// The session leases of one node, kept in Redis: a node owns a session while it holds its
/// lease, a key set only if absent, with an expiry the owner renews. Each new owner takes the
/// next number of the session's fencing counter, which the shared store checks on every write,
/// so that an owner that lost its lease (paused, cut off) cannot write over its successor.
final class SessionLeases: Sendable {
    let redis: RedisClient
    /// This node's number.
    let node: Int
    /// How long a lease lasts without renewal.
    let ttl: Duration

    init(redis: RedisClient, node: Int, ttl: Duration) {
        self.redis = redis
        self.node = node
        self.ttl = ttl
    }

    enum Answer: Hashable, Sendable {
        /// This node owns the session now (or already did).
        case granted(Lease)
        /// Another node does, for `remaining` more unless it renews.
        case held(Lease, remaining: Duration)
    }

    /// Takes the lease of `session` if no node holds it.
    func acquire(_ session: String) throws(RedisError) -> Answer {
        let reply = try redis.eval(Self.acquireScript, keys: [ClusterKeys.lease(session), ClusterKeys.fence(session)],
                                   arguments: [String(node), String(Self.milliseconds(ttl))])
        guard let parts = reply.elements, parts.count == 3, let granted = parts[0].integer, let value = parts[1].text,
              let lease = Lease(value: value), let remaining = parts[2].integer
        else { throw Self.unexpected(reply, "acquire", session) }
        return granted == 1 ? .granted(lease) : .held(lease, remaining: .milliseconds(max(0, remaining)))
    }

    /// Renews the leases this node holds, in one round trip; returns the sessions whose lease
    /// is no longer this node's (expired, or taken by another node).
    func renew(_ leases: [String: Lease]) throws(RedisError) -> Set<String> {
        guard !leases.isEmpty else { return [] }
        let sessions = Array(leases.keys)
        let ms = String(Self.milliseconds(ttl))
        let replies = try redis.pipeline(sessions.map { session in
            ["EVAL", Self.renewScript, "1", ClusterKeys.lease(session), leases[session]!.value, ms].map { Array($0.utf8) }
        })
        var lost: Set<String> = []
        for (session, reply) in zip(sessions, replies) where reply.integer != 1 {
            if case .error = reply { throw Self.unexpected(reply, "renew", session) }
            lost.insert(session)
        }
        return lost
    }

    /// Moves this node's fresh lease past `stored`, the fence of the session's last stored write,
    /// when the counter is not above it (Redis lost its counters: a restart without persistence),
    /// so that the store takes this owner's writes. Nil if the lease is not `lease` any more.
    func advance(_ session: String, _ lease: Lease, past stored: UInt64) throws(RedisError) -> Lease? {
        guard stored >= lease.fence else { return lease }
        let reply = try redis.eval(Self.advanceScript, keys: [ClusterKeys.lease(session), ClusterKeys.fence(session)],
                                   arguments: [lease.value, String(node), String(stored)])
        guard let fence = reply.integer else { throw Self.unexpected(reply, "advance", session) }
        return fence > 0 ? Lease(node: node, fence: UInt64(fence)) : nil
    }

    /// Gives the lease up (when the session unloads), if it is still this one.
    func release(_ session: String, _ lease: Lease) throws(RedisError) {
        _ = try redis.eval(Self.releaseScript, keys: [ClusterKeys.lease(session)], arguments: [lease.value])
    }

    /// The current owners of those of `sessions` that have one, in one round trip.
    func holders(_ sessions: [String]) throws(RedisError) -> [String: Lease] {
        guard !sessions.isEmpty else { return [:] }
        let replies = try redis.pipeline(sessions.map { ["GET", ClusterKeys.lease($0)].map { Array($0.utf8) } })
        var holders: [String: Lease] = [:]
        for (session, reply) in zip(sessions, replies) {
            if case .error = reply { throw Self.unexpected(reply, "read", session) }
            holders[session] = reply.text.flatMap(Lease.init(value:))
        }
        return holders
    }

    private static func unexpected(_ reply: RedisReply, _ action: String, _ session: String) -> RedisError {
        if case .error(let message) = reply { return RedisError(.replied, "lease \(action) of session \(session): \(message)") }
        return RedisError(.unexpected, "lease \(action) of session \(session): unexpected reply \(reply)")
    }

    private static func milliseconds(_ duration: Duration) -> Int64 {
        duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
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
