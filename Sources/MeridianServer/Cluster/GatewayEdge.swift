import MeridianTransport

/// The gateway as the edge of this node's connections whose sessions other nodes own: where
/// each one's requests go, which of them wait for an answer, which sessions' channels this node
/// hears, and which nodes may no longer reach a member moved in place. A value with no I/O and
/// the clock passed in: ``ClusterGateway`` sends and posts what its methods return.
struct GatewayEdge {
    /// Subscriptions to start and stop, and owners to tell, after a change of interest.
    struct ChannelChanges: Equatable {
        var subscribe: [String] = []
        var unsubscribe: [Unsubscribe] = []

        struct Unsubscribe: Equatable {
            var session: String
            /// The owner told this node hears the session, to be told it no longer does.
            var owner: Int?
        }

        var isEmpty: Bool { subscribe.isEmpty && unsubscribe.isEmpty }
    }

    /// How many of a connection's requests another node has not answered yet, and since when it
    /// has waited for the oldest of them with no answer coming (the first request sent, or the
    /// last answer, whichever is later).
    struct Unanswered: Equatable {
        private(set) var count = 0
        private(set) var since: ContinuousClock.Instant

        init(at now: ContinuousClock.Instant) { since = now }

        mutating func sent(at now: ContinuousClock.Instant) {
            if count == 0 { since = now }
            count += 1
        }

        /// One answer came; true when none is owed any more.
        mutating func answered(at now: ContinuousClock.Instant) -> Bool {
            count -= 1
            since = now
            return count <= 0
        }
    }

    /// The node each connection's requests go to, and every node they went to.
    private(set) var routes: [ConnectionID: Int] = [:]
    private var nodes: [ConnectionID: Set<Int>] = [:]
    /// Each routed member's session, as its owner last said.
    private(set) var sessions: [ConnectionID: String] = [:]
    /// Connections with requests another node has not answered yet.
    private(set) var unanswered: [ConnectionID: Unanswered] = [:]
    /// For each node, the members moved in place that it served before: nothing it sends for
    /// them is delivered any more (frames of the session's old life, sent before it let them go,
    /// may still be on their way), and a join of theirs is not sent to it (they are closed with
    /// 4012 and join again). Kept until they close.
    private(set) var retired: [Int: Set<ConnectionID>] = [:]
    /// The session each routed connection counts towards (from its join on), and how many count
    /// for each session: while any does, this node hears the session's channel.
    private(set) var interest: [ConnectionID: String] = [:]
    private(set) var interested: [String: Int] = [:]
    /// Sessions whose channel the broker confirmed, and the owner told so.
    private var confirmed: Set<String> = []
    private var told: [String: Int] = [:]

    /// A request of `connection` for a session owned elsewhere (`join`: the session a join names;
    /// `owners`: who owns what, as last heard): the node it goes to, nil when none is known any
    /// more or that node retired the connection. A join makes the connection count towards its
    /// session, so that this node hears the session's channel before the owner sends anything
    /// there for it.
    mutating func forward(_ connection: ConnectionID, join session: String?, owners: [String: Int], at now: ContinuousClock.Instant)
        -> (node: Int, changes: ChannelChanges)?
    {
        guard let node = session.flatMap({ owners[$0] }) ?? routes[connection], retired[node]?.contains(connection) != true else { return nil }
        routes[connection] = node
        nodes[connection, default: []].insert(node)
        unanswered[connection, default: Unanswered(at: now)].sent(at: now)
        return (node, session.map { setInterest(connection, $0) } ?? ChannelChanges())
    }

    /// A reply made at this node for `connection` (`isAnswer`: to one of its requests), which goes
    /// through the owner: the node, nil when the connection is routed nowhere.
    mutating func echo(_ connection: ConnectionID, isAnswer: Bool, at now: ContinuousClock.Instant) -> Int? {
        guard let node = routes[connection] else { return nil }
        if isAnswer { unanswered[connection, default: Unanswered(at: now)].sent(at: now) }
        return node
    }

    /// An answer from another node to `member`'s request came.
    mutating func answered(_ member: ConnectionID, at now: ContinuousClock.Instant) {
        if unanswered[member]?.answered(at: now) == true { unanswered[member] = nil }
    }

    /// The owner `sender` says `connection` is in `session` now (nil: none): the connection is
    /// routed there, the owner noted, and whether to tell it that this node hears the session.
    mutating func membership(_ connection: ConnectionID, session: String?, from sender: Int, owners: inout [String: Int])
        -> (changes: ChannelChanges, tell: String?)
    {
        routes[connection] = sender
        nodes[connection, default: []].insert(sender)
        sessions[connection] = session
        var tell: String?
        if let session {
            owners[session] = sender
            if confirmed.contains(session), told[session] != sender {
                told[session] = sender
                tell = session
            }
        }
        return (setInterest(connection, session), tell)
    }

    /// The broker confirmed this node hears `session`'s channel: its owner (if another node,
    /// not told yet) is to be told.
    mutating func confirmed(_ session: String, owners: [String: Int]) -> Int? {
        guard interested[session] != nil else { return nil }
        confirmed.insert(session)
        guard let owner = owners[session], told[session] != owner else { return nil }
        told[session] = owner
        return owner
    }

    /// Forgets what was kept for `connection` as a member served elsewhere (its routes, its
    /// unanswered requests, its interest): the nodes that served it, to be told it is gone.
    mutating func leave(_ connection: ConnectionID) -> (nodes: Set<Int>, changes: ChannelChanges) {
        let nodes = nodes.removeValue(forKey: connection) ?? []
        routes[connection] = nil
        sessions[connection] = nil
        unanswered[connection] = nil
        return (nodes, setInterest(connection, nil))
    }

    /// `connection` closed: nothing is retired for it any more.
    mutating func unretire(_ connection: ConnectionID) {
        guard !retired.isEmpty else { return }
        for node in Array(retired.keys) {
            retired[node]?.remove(connection)
            if retired[node]?.isEmpty == true { retired[node] = nil }
        }
    }

    /// `connection` was moved in place out of `session`: the nodes that served it (`nodes`)
    /// retire it, and an owner of the session among them is forgotten.
    mutating func retire(_ connection: ConnectionID, from nodes: Set<Int>, session: String, owners: inout [String: Int]) {
        for node in nodes { retired[node, default: []].insert(connection) }
        if let owner = owners[session], nodes.contains(owner) { owners[session] = nil }
    }

    /// Node `node` is gone: the members routed to it, with their sessions.
    func routed(to node: Int) -> [(ConnectionID, String?)] {
        routes.filter { $0.value == node }.map { ($0.key, sessions[$0.key]) }.sorted { $0.0 < $1.0 }
    }

    /// The link between nodes broke: the members routed anywhere, to be closed; owners are no
    /// longer told what this node hears, until its members join again.
    mutating func linkLost() -> [ConnectionID] {
        told.removeAll()
        confirmed.removeAll()
        return routes.keys.sorted()
    }

    /// The members that have waited `limit` or longer for another node's answer with none
    /// coming, which are forgotten as waiting.
    mutating func overdue(after limit: Duration, at now: ContinuousClock.Instant) -> [ConnectionID] {
        let overdue = unanswered.filter { now - $0.value.since > limit }.map(\.key)
        for connection in overdue { unanswered[connection] = nil }
        return overdue.sorted()
    }

    /// Sessions owned elsewhere that members here are routed to (joined, or with a join on its
    /// way), with their owners.
    func routedOwners(_ owners: [String: Int]) -> [String: Int] {
        var routed: [String: Int] = [:]
        for session in interested.keys { if let owner = owners[session] { routed[session] = owner } }
        return routed
    }

    /// The members that count towards `session`.
    func members(of session: String) -> [ConnectionID] {
        interest.filter { $0.value == session }.map(\.key).sorted()
    }

    /// `connection` counts towards `session` now (nil: none).
    private mutating func setInterest(_ connection: ConnectionID, _ session: String?) -> ChannelChanges {
        var changes = ChannelChanges()
        let old = interest[connection]
        guard old != session else { return changes }
        interest[connection] = session
        if let old {
            interested[old, default: 1] -= 1
            if interested[old] == 0 {
                interested[old] = nil
                confirmed.remove(old)
                changes.unsubscribe.append(ChannelChanges.Unsubscribe(session: old, owner: told.removeValue(forKey: old)))
            }
        }
        if let session {
            interested[session, default: 0] += 1
            if interested[session] == 1 { changes.subscribe.append(session) }
        }
        return changes
    }
}
