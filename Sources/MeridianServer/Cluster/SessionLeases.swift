/// Who owns a session: a node, and the fencing number it took the lease with.
struct Lease: Hashable, Sendable, CustomStringConvertible {
    var node: Int
    var fence: UInt64

    /// The lease's value in the broker (a Redis key's): `"NODE FENCE"`.
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

/// The session leases of one node, kept by the cluster's broker (``LeaseStore``): a node owns
/// a session while it holds its lease, taken only if no node holds it, with an expiry the owner
/// renews. Each new owner takes the next number of the session's fencing counter, which the
/// shared store checks on every write, so that an owner that lost its lease (paused, cut off)
/// cannot write over its successor.
struct SessionLeases: Sendable {
    let store: any LeaseStore
    /// This node's number.
    let node: Int
    /// How long a lease lasts without renewal.
    let ttl: Duration

    init(store: any LeaseStore, node: Int, ttl: Duration) {
        self.store = store
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
    func acquire(_ session: String) throws(BrokerError) -> Answer {
        try store.acquire(session, node: node, ttl: ttl)
    }

    /// Renews the leases this node holds, in one round trip; returns the sessions whose lease
    /// is no longer this node's (expired, or taken by another node).
    func renew(_ leases: [String: Lease]) throws(BrokerError) -> Set<String> {
        try store.renew(leases, ttl: ttl)
    }

    /// Moves this node's fresh lease past `stored`, the fence of the session's last stored write,
    /// when the counter is not above it (the broker lost its counters: a Redis restart without
    /// persistence), so that the store takes this owner's writes. Nil if the lease is not `lease`
    /// any more.
    func advance(_ session: String, _ lease: Lease, past stored: UInt64) throws(BrokerError) -> Lease? {
        guard stored >= lease.fence else { return lease }
        return try store.advance(session, lease, node: node, past: stored)
    }

    /// Gives the lease up (when the session unloads), if it is still this one.
    func release(_ session: String, _ lease: Lease) throws(BrokerError) {
        try store.release(session, lease)
    }

    /// The current owners of those of `sessions` that have one, in one round trip.
    func holders(_ sessions: [String]) throws(BrokerError) -> [String: Lease] {
        try store.holders(sessions)
    }
}
