/// The relay of a cluster node: its hubs' in-process relay, plus the gateway to the other
/// nodes (``ClusterGateway``) at index `hubs`. A session another node owns has the gateway
/// as its home.
final class ClusterRelay: Relay {
    let local: LocalRelay
    let gateway: Int?
    let cluster: ClusterGateway

    init(local: LocalRelay, cluster: ClusterGateway) {
        self.local = local
        self.cluster = cluster
        gateway = local.hubs
    }

    var hubs: Int { local.hubs }

    func home(of session: String) -> Int {
        cluster.owner(of: session) == nil ? localHome(of: session) : local.hubs
    }

    func post(_ message: RelayMessage, to hub: Int) {
        if hub == local.hubs { return cluster.post(message) }
        local.post(message, to: hub)
    }

    func take(for hub: Int) -> [RelayMessage] { local.take(for: hub) }
}
