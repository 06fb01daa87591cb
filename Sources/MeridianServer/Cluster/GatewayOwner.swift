import MeridianTransport

/// The gateway as the owner of sessions with members on other nodes: each such member has an
/// alias here (a connection id of the gateway's, `index` its hub tag) that the home hub serves
/// as a member on another hub, and this value knows which hubs each alias's requests went to,
/// its session, the large messages on their way to it, and which nodes hear each session's
/// channel. A value with no I/O: ``ClusterGateway`` sends and posts what its methods return.
struct GatewayOwner {
    /// The gateway's index among the relay's hubs: the tag of every alias.
    let index: Int
    /// The aliases of other nodes' members, both ways.
    private(set) var aliases: [RemoteConnection: ConnectionID] = [:]
    private(set) var remotes: [ConnectionID: RemoteConnection] = [:]
    /// The hubs an alias's requests went to, and the latest.
    private var hubs: [ConnectionID: Set<Int>] = [:]
    private var last: [ConnectionID: Int] = [:]
    private var nextAlias: UInt64 = 1
    /// The payload so far of a message an alias is being sent in fragments.
    private var fragments: [ConnectionID: [UInt8]] = [:]
    /// Each alias's session, and the nodes that hear each session's channel.
    private var sessions: [ConnectionID: String] = [:]
    private(set) var listeners: [String: Set<Int>] = [:]

    init(index: Int) { self.index = index }

    /// Whether `connection` is an alias of another node's member.
    func isAlias(_ connection: ConnectionID) -> Bool { Int(connection.tag) == index }

    /// A request of `origin`, another node's member (`join`: the session a join names, `home` its
    /// hub here, `ownedElsewhere`: another node owns it): its alias (made for a first request) and
    /// the hub it goes to; the gateway itself (`index`) for a join that goes on to yet another
    /// node.
    mutating func request(from origin: RemoteConnection, join session: String?, ownedElsewhere: Bool, home: (String) -> Int) -> (alias: ConnectionID, hub: Int) {
        let alias = aliases[origin] ?? {
            let made = ConnectionID(tag: UInt8(truncatingIfNeeded: index), serial: nextAlias)
            nextAlias += 1
            aliases[origin] = made
            remotes[made] = origin
            return made
        }()
        var hub = last[alias] ?? 0
        if let session { hub = ownedElsewhere ? index : home(session) }
        if hub != index {
            hubs[alias, default: []].insert(hub)
            last[alias] = hub
        }
        return (alias, hub)
    }

    /// The alias of `origin` and the hub its latest request went to, for a reply made at its edge.
    func echo(from origin: RemoteConnection) -> (alias: ConnectionID, hub: Int)? {
        aliases[origin].map { ($0, last[$0] ?? 0) }
    }

    /// The home says `alias` is in `session` now: the member to tell, on its node.
    mutating func membership(_ alias: ConnectionID, session: String?) -> RemoteConnection? {
        sessions[alias] = session
        return remotes[alias]
    }

    /// Forgets `origin`'s alias: the alias and the hubs that keep its state, to be told it closed.
    mutating func forget(_ origin: RemoteConnection) -> (alias: ConnectionID, hubs: Set<Int>)? {
        guard let alias = aliases.removeValue(forKey: origin) else { return nil }
        remotes[alias] = nil
        fragments[alias] = nil
        last[alias] = nil
        sessions[alias] = nil
        return (alias, hubs.removeValue(forKey: alias) ?? [])
    }

    /// Where a frame for `members` goes: one target per node (with the member to skip there), the
    /// session's channel for a broadcast and the nodes that hear it.
    func targets(of members: [ConnectionID], except skip: ConnectionID?) -> (byNode: [FrameTarget], session: String?, listening: Set<Int>) {
        let skipped = skip.flatMap { remotes[$0] }
        var byNode: [Int: FrameTarget] = [:]
        var session: String?
        for alias in members {
            guard let remote = remotes[alias] else { continue }
            byNode[remote.node, default: FrameTarget(node: remote.node, members: [], skip: skipped?.node == remote.node ? skipped?.connection : nil)]
                .members.append(remote.connection)
            if session == nil { session = sessions[alias] }
        }
        let targets = byNode.values.sorted { $0.node < $1.node }
        guard members.count > 1, let session else { return (targets, nil, []) }
        return (targets, session, listeners[session] ?? [])
    }

    /// A fragment of a message for `members` (`first`: it starts one; `last`: it ends it): the
    /// whole messages now complete, each with its member.
    mutating func fragment(_ payload: UnsafeRawBufferPointer, first: Bool, last final: Bool, for members: [ConnectionID]) -> [(RemoteConnection, [UInt8])] {
        var whole: [(RemoteConnection, [UInt8])] = []
        for alias in members {
            guard let remote = remotes[alias] else { continue }
            if first { fragments[alias] = [] }
            fragments[alias, default: []].append(contentsOf: payload)
            if final, let message = fragments.removeValue(forKey: alias) { whole.append((remote, message)) }
        }
        return whole
    }

    /// Node `node` hears `session`'s channel now (or no longer).
    mutating func listens(_ node: Int, to session: String, _ listening: Bool) {
        if listening { return _ = listeners[session, default: []].insert(node) }
        listeners[session]?.remove(node)
        if listeners[session]?.isEmpty == true { listeners[session] = nil }
    }

    /// Node `node` is gone: the aliases of its members, forgotten, with their hubs.
    mutating func nodeGone(_ node: Int) -> [(alias: ConnectionID, hubs: Set<Int>)] {
        let gone = aliases.keys.filter { $0.node == node }.compactMap { forget($0) }
        for session in Array(listeners.keys) { listens(node, to: session, false) }
        return gone
    }

    /// The link between nodes broke: every alias, forgotten, with its hubs; nobody is known to
    /// hear any channel (edges say so again once their members join again).
    mutating func linkLost() -> [(alias: ConnectionID, hubs: Set<Int>)] {
        let gone = Array(aliases.keys).compactMap { forget($0) }
        listeners.removeAll()
        return gone
    }

    /// The nodes that have members here.
    var nodes: Set<Int> { Set(remotes.values.map(\.node)) }
}
