import MeridianRedis

/// How a node joins a Meridian cluster: the Redis that holds the session leases and carries
/// the relay between nodes. Without one the server is a single node.
public struct ClusterConfiguration: Sendable {
    /// The Redis the nodes share: its host and port, credentials, database and TLS settings.
    public var redis: RedisAddress
    /// How long a session's lease lasts without renewal: the longest a session stays without
    /// an owner after its owner dies. The owner renews every quarter of it.
    public var leaseTTL: Duration
    /// The address other nodes and operators know this node by (shown in the overview).
    public var advertise: String

    /// A node's configuration: the shared Redis, the lease length (default 2 s) and the address it advertises (default empty).
    public init(redis: RedisAddress, leaseTTL: Duration = .seconds(2), advertise: String = "") {
        self.redis = redis
        self.leaseTTL = leaseTTL
        self.advertise = advertise
    }
}
