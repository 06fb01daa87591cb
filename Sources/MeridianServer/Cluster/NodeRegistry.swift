/// The nodes of a cluster, in its broker (``NodeDirectory``): each node takes a number when it
/// starts (never reused) and keeps an entry alive with its address while it runs, so that the
/// others can tell a live owner from a dead one.
struct NodeRegistry: Sendable {
    let directory: any NodeDirectory
    /// How long a node's entry lasts without renewal.
    let ttl: Duration

    init(directory: any NodeDirectory, ttl: Duration) {
        self.directory = directory
        self.ttl = ttl
    }

    /// Takes a new node number and announces `address` under it.
    func register(address: String) throws(BrokerError) -> Int {
        let number = try directory.register()
        try heartbeat(number, address: address)
        return number
    }

    /// Renews node `number`'s entry.
    func heartbeat(_ number: Int, address: String) throws(BrokerError) {
        try directory.heartbeat(number, address: address, ttl: ttl)
    }

    /// The live nodes and their addresses.
    func live(_ numbers: [Int]) throws(BrokerError) -> [Int: String] {
        try directory.live(numbers)
    }

    /// Forgets node `number` (a node that stops).
    func leave(_ number: Int) throws(BrokerError) {
        try directory.leave(number)
    }
}
