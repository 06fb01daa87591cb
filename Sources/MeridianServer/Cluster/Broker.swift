/// What the nodes of a cluster share, through one broker: session leases with fencing numbers,
/// the registry of live nodes, each node's part of the overview, and channels (a session's
/// frames, a node's inbox). ``RedisBroker`` in production; ``MemoryBroker`` in tests, for
/// several nodes in one process with a clock the test moves.
///
/// Calls come from any thread and wait for their answer. A broker out of reach throws a
/// ``BrokerError`` of kind `.unreachable` (the call may or may not have been carried out).
typealias Broker = LeaseStore & NodeDirectory & OverviewParts & ChannelBus

/// Why a broker call failed.
struct BrokerError: Error, Hashable, Sendable, CustomStringConvertible {
    enum Kind: Hashable, Sendable {
        /// The broker could not be reached, or the link broke or timed out: the call may or may
        /// not have been carried out.
        case unreachable
        /// The broker answered with an error.
        case refused
        /// An answer of a shape the caller did not expect.
        case unexpected
    }

    let kind: Kind
    let message: String

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    var description: String { message }
}

/// Session leases: a session's owner holds its lease until it expires or is released; each new
/// owner takes the next number of the session's fencing counter, which never goes down.
protocol LeaseStore: Sendable {
    /// Takes the lease of `session` for `node` if no node holds it (or extends it, if `node`
    /// does already), for `ttl`.
    func acquire(_ session: String, node: Int, ttl: Duration) throws(BrokerError) -> SessionLeases.Answer
    /// Extends each lease that is still the one given; returns the sessions whose lease is not.
    func renew(_ leases: [String: Lease], ttl: Duration) throws(BrokerError) -> Set<String>
    /// Moves `lease` (still current) to a fence above `stored` for `node`, keeping its expiry;
    /// nil if the lease is not `lease` any more.
    func advance(_ session: String, _ lease: Lease, node: Int, past stored: UInt64) throws(BrokerError) -> Lease?
    /// Drops the lease if it is still `lease`.
    func release(_ session: String, _ lease: Lease) throws(BrokerError)
    /// The current lease of each of `sessions` that has one.
    func holders(_ sessions: [String]) throws(BrokerError) -> [String: Lease]
}

/// The nodes of a cluster: numbers handed out once each, and a liveness entry per node (its
/// address) that expires unless renewed.
protocol NodeDirectory: Sendable {
    /// A new node number, never handed out before (while the broker keeps its counter).
    func register() throws(BrokerError) -> Int
    /// Sets node `node`'s liveness entry to `address`, for `ttl`.
    func heartbeat(_ node: Int, address: String, ttl: Duration) throws(BrokerError)
    /// The addresses of those of `nodes` whose entry has not expired.
    func live(_ nodes: [Int]) throws(BrokerError) -> [Int: String]
    /// Drops node `node`'s entry.
    func leave(_ node: Int) throws(BrokerError)
}

/// Each node's part of the cluster's overview (the JSON of its sessions).
protocol OverviewParts: Sendable {
    /// Stores `part` as node `node`'s and returns every node's part (its own included).
    func share(_ part: String, from node: Int) throws(BrokerError) -> [(node: Int, value: [UInt8])]
    /// Drops the parts of `nodes`.
    func drop(_ nodes: [Int]) throws(BrokerError)
}

/// What a subscriber hears.
enum ChannelEvent: Sendable {
    case message(channel: String, payload: [UInt8])
    /// Subscribed again to every channel after a new link (the first one too).
    case connected
    /// The link broke or could not be made; messages may have been missed.
    case disconnected(BrokerError)
    /// The broker confirmed a subscription: messages published to `channel` from now on arrive.
    case subscribed(channel: String)
}

/// Publish and subscribe. A publisher sends every message in the order it was given (whatever
/// the channel), without waiting; a message published while the broker is out of reach is lost
/// and reported. A subscriber hears what is published to its channels after the broker confirmed
/// them, in order; nothing is kept for it while it is cut off.
protocol ChannelBus: Sendable {
    /// A publisher; `onLost` hears how many messages were lost, and why.
    func publisher(onLost: @escaping @Sendable (Int, BrokerError) -> Void) -> any ChannelPublisher
    /// A subscriber; `handler` hears its events, one at a time.
    func subscriber(_ handler: @escaping @Sendable (ChannelEvent) -> Void) -> any ChannelSubscriber
}

protocol ChannelPublisher: Sendable {
    func publish(_ payload: [UInt8], to channel: String)
    /// Publishes what is queued, then stops.
    func stop()
}

protocol ChannelSubscriber: Sendable {
    func subscribe(_ channel: String)
    func unsubscribe(_ channel: String)
    /// Returns once the broker confirmed `channel`, or the subscriber stopped.
    func waitUntilSubscribed(_ channel: String)
    func stop()
}
