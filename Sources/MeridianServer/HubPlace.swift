import MeridianSync

/// Where a hub stands among the hubs of one server: its index (the high byte of the ids of
/// its connections) and the relay to the others. A class: a hub reads it for most requests,
/// and a reference is one retain where a value of references is one for each.
final class HubPlace: Sendable {
    let hub: Int
    let relay: any Relay
    /// Where the hubs post their part of the overview (one for all of them).
    let board: OverviewBoard
    /// Each hub's sessions, loaded and loading, for the server's limit (one for all of them).
    let loads: LoadCounts
    /// This server as a node of a cluster (nil: a single node).
    let cluster: ClusterNode?

    init(hub: Int, relay: any Relay, board: OverviewBoard, loads: LoadCounts, cluster: ClusterNode? = nil) {
        self.hub = hub
        self.relay = relay
        self.board = board
        self.loads = loads
        self.cluster = cluster
    }
}

/// Each hub's sessions, loaded and loading.
final class LoadCounts: Sendable {
    private let counts = Locked<[Int: (loaded: Int, loading: Int)]>([:])

    func post(loaded: Int, loading: Int, from hub: Int) { counts.withLock { $0[hub] = (loaded, loading) } }

    /// The other hubs' sessions: loaded, and loading.
    func total(except hub: Int) -> (loaded: Int, loading: Int) {
        counts.withLock { counts in
            counts.reduce((0, 0)) { sum, entry in entry.key == hub ? sum : (sum.0 + entry.value.loaded, sum.1 + entry.value.loading) }
        }
    }
}
