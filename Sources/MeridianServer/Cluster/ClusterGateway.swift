import MeridianAuth
import MeridianProtocol
import MeridianSync
import MeridianTransport
import Synchronization

/// The other nodes of a cluster, seen from this node's hubs as one more hub: the relay index
/// one past the last hub (``Relay/gateway``). What the hubs post to it goes to other nodes
/// through Redis (``ClusterMessage``); what other nodes send is posted to the hubs here.
///
/// As an edge, it forwards the requests of members whose session is owned elsewhere to the
/// owner, and hands the owner's frames to the hubs of those members. As an owner, it stands for
/// every member of another node with an alias, a connection id of its own (its high byte the
/// gateway's index), so that a home hub serves it as it serves a member on another hub.
///
/// Messages go through the cluster's broker (``ChannelBus``): Redis, or memory in tests. What
/// the gateway knows is two values under one lock, ``GatewayEdge`` and ``GatewayOwner``, which
/// decide; the gateway sends and posts what they say.
final class ClusterGateway: Sendable {
    struct State {
        /// Sessions owned by another node, as last heard: session → node.
        var owners: [String: Int] = [:]
        /// This node's connections served by other nodes.
        var edge = GatewayEdge()
        /// Other nodes' members served here.
        var owner: GatewayOwner
        /// Messages relayed each way, for /metrics.
        var sent = 0
        var received = 0
    }

    /// This node's number, once it has joined the cluster.
    var node: Int { number.load(ordering: .acquiring) }
    private let number = Atomic<Int>(0)
    /// The local hubs' relay; the gateway is its index `index`.
    let local: LocalRelay
    let index: Int
    private let publisher: any ChannelPublisher
    let state: Locked<State>
    /// Hears the session channels (set when the node starts).
    let subscriber = Locked<(any ChannelSubscriber)?>(nil)

    func assign(node: Int) { number.store(node, ordering: .releasing) }

    init(local: LocalRelay, publisher: any ChannelPublisher) {
        self.local = local
        self.index = local.hubs
        self.publisher = publisher
        self.state = Locked(State(owner: GatewayOwner(index: local.hubs)))
    }

    private func send(_ message: ClusterMessage, to node: Int) {
        publisher.publish(ClusterWire.encode(message, from: self.node), to: ClusterKeys.inbox(node))
    }

    // MARK: From this node's hubs

    /// A message a hub posted to the gateway.
    func post(_ message: RelayMessage) {
        switch message {
        case .request(let request, let connection, let peer, let grant):
            forward(request, from: connection, peer: peer, grant: grant)
        case .echo(let relayed, let connection):
            // A reply made here goes through the owner, and comes back as an answer like its own.
            let answer = Self.isAnswer(relayed.frame.wire), now = ContinuousClock.now
            guard let node = state.withLock({ $0.edge.echo(connection, isAnswer: answer, at: now) }) else { return }
            send(.echo(origin: RemoteConnection(node: self.node, connection: connection), wire: relayed.frame.wire.wireBytes), to: node)
        case .closed(let connection, let code, let reason):
            leaveEdge(connection, code: code, reason: reason) { state, _ in state.edge.unretire(connection) }
        case .frame(let relayed, let members, let skip):
            relay(relayed, to: members, except: skip)
        case .close(let alias, let code, let reason):
            guard let remote = state.withLock({ $0.owner.remotes[alias] }) else { return }
            send(.close(remote.connection, code: code, reason: reason), to: remote.node)
        case .handedOver(let connection, let session):
            handedOver(connection, session: session)
        case .membership(let alias, let session, _):
            guard let remote = state.withLock({ $0.owner.membership(alias, session: session) }) else { return }
            send(.membership(remote.connection, session: session), to: remote.node)
        case .http, .gather, .evict, .evicted, .rerouted, .leaseLost, .moved:
            // Node-local, or (rerouted) told to the edge by the new owner's membership; an owner
            // lets an alias go with a 4012 close, which its edge turns into a move.
            break
        }
        state.withLock { $0.sent += 1 }
    }

    /// Owner: a frame for other nodes' members (aliases). A broadcast goes once on the session's
    /// channel for the nodes that hear it, and to the inbox of each node that does not yet; a
    /// frame for one member goes to its node's inbox. Every message leaves on one connection, in
    /// order, so a node hears them in the order they were sent, whatever the channel.
    private func relay(_ relayed: RelayedFrame, to members: [ConnectionID], except skip: ConnectionID?) {
        if !relayed.frame.wire.isFinal || relayed.frame.wire.opcode == 0 {
            return relayFragment(relayed, to: members.filter { $0 != skip })
        }
        let (byNode, session, listening) = state.withLock { $0.owner.targets(of: members, except: skip) }
        let wire = relayed.frame.wire.wireBytes
        let frame = { (targets: [FrameTarget]) in
            ClusterMessage.frame(wire: wire, shared: relayed.frame.isShared, token: relayed.token, supersedes: relayed.supersedes, targets: targets)
        }
        let together = byNode.filter { listening.contains($0.node) }
        if !together.isEmpty, let session {
            publisher.publish(ClusterWire.encode(frame(together), from: node), to: ClusterKeys.channel(session))
        }
        for target in byNode where !listening.contains(target.node) {
            send(frame([target]), to: target.node)
        }
    }

    /// Owner: a fragment of a message for other nodes' members (a large welcome). The message
    /// leaves this node whole, one frame for each member to its node's inbox, once its last
    /// fragment is here: a message between nodes may be lost (a publisher whose link broke), and
    /// a client must never be sent part of one. A message's fragments come back to back.
    private func relayFragment(_ relayed: RelayedFrame, to members: [ConnectionID]) {
        let wire = relayed.frame.wire
        let whole = wire.withPayload { payload in
            state.withLock { $0.owner.fragment(payload, first: wire.opcode != 0, last: wire.isFinal, for: members) }
        }
        for (remote, payload) in whole {
            let frame = OutboundFrame(text: payload).relayable.wire.wireBytes
            let target = FrameTarget(node: remote.node, members: [remote.connection], skip: nil)
            send(.frame(wire: frame, shared: false, token: relayed.token, supersedes: relayed.supersedes, targets: [target]), to: remote.node)
        }
    }

    private func apply(_ changes: GatewayEdge.ChannelChanges) {
        guard !changes.isEmpty else { return }
        let subscriber = self.subscriber.withLock { $0 }
        for gone in changes.unsubscribe {
            subscriber?.unsubscribe(ClusterKeys.channel(gone.session))
            if let owner = gone.owner { send(.unsubscribed(session: gone.session), to: owner) }
        }
        for session in changes.subscribe { subscriber?.subscribe(ClusterKeys.channel(session)) }
    }

    /// Edge: Redis confirmed this node hears `channel`: the session's owner is told, and
    /// publishes its broadcasts for this node there from then on.
    func confirmed(_ channel: String) {
        guard let session = ClusterKeys.session(ofChannel: channel) else { return }
        let owner = state.withLock { state in state.edge.confirmed(session, owners: state.owners) }
        if let owner { send(.subscribed(session: session), to: owner) }
    }

    /// A request for a session owned elsewhere: from a local connection (this node is its
    /// edge), or from an alias whose join turned out to belong to yet another node.
    private func forward(_ request: ClientRequest, from connection: ConnectionID, peer: String, grant: AccessGrant?) {
        guard let text = request.text else { return }
        var changes = GatewayEdge.ChannelChanges()
        let now = ContinuousClock.now
        let target: (origin: RemoteConnection, node: Int)? = state.withLock { state in
            let session: String? = if case .join(let id, _, _) = request.body { id } else { nil }
            if state.owner.isAlias(connection) {
                guard let remote = state.owner.remotes[connection], let session, let owner = state.owners[session] else { return nil }
                return (remote, owner)
            }
            guard let routed = state.edge.forward(connection, join: session, owners: state.owners, at: now) else { return nil }
            changes = routed.changes
            return (RemoteConnection(node: self.node, connection: connection), routed.node)
        }
        apply(changes)
        guard let target else {
            // The owner is not known any more (it changed meanwhile): the client joins again.
            if LocalRelay.hub(of: connection) != index { local.post(.close(connection, code: CloseCode.sessionMoved, reason: "session moved"), to: LocalRelay.hub(of: connection)) }
            return
        }
        send(.request(origin: target.origin, peer: peer, grant: grant, text: text), to: target.node)
    }

    // MARK: From other nodes

    /// A message from another node, on the subscriber's thread.
    func receive(_ bytes: [UInt8]) {
        guard let (sender, message) = ClusterWire.decode(bytes) else { return }
        state.withLock { $0.received += 1 }
        switch message {
        case .request(let origin, let peer, let grant, let text):
            guard case .success(var request) = ClientRequest.decode(text) else { return }
            request.text = text
            let isJoin = if case .join = request.body { true } else { false }
            if !isJoin, state.withLock({ $0.owner.aliases[origin] == nil }) {
                // A member this node let go while the link to its node was broken (its edge could
                // not be told): the edge closes it with 4012, and it joins again.
                return send(.close(origin.connection, code: CloseCode.sessionMoved,
                                   reason: "the session's owner lost track of this member (the link between nodes broke); join again"),
                            to: origin.node)
            }
            let joined: String? = if case .join(let session, _, _) = request.body { session } else { nil }
            let (alias, hub) = state.withLock { state in
                // A join from the node this one takes for the session's owner: each takes the
                // other for it, and one heard so late. Sent back, it would go round between them;
                // it is served here instead, where a load asks Redis who holds the lease.
                if let joined, state.owners[joined] == origin.node { state.owners[joined] = nil }
                return state.owner.request(from: origin, join: joined, ownedElsewhere: joined.map { state.owners[$0] != nil } ?? false, home: local.home(of:))
            }
            if hub == index { return post(.request(request, from: alias, peer: peer, handshakeGrant: grant)) }
            local.post(.request(request, from: alias, peer: peer, handshakeGrant: grant), to: hub)
        case .echo(let origin, let wire):
            guard let frame = FrameBytes(wire: wire),
                  let (alias, hub) = state.withLock({ $0.owner.echo(from: origin) })
            else { return }
            local.post(.echo(RelayedFrame(frame: RelayableFrame(wire: frame, isShared: false), token: nil, supersedes: nil), to: alias), to: hub)
        case .closed(let origin, let code, let reason):
            guard let (alias, hubs) = state.withLock({ $0.owner.forget(origin) }) else { return }
            for hub in hubs.sorted() { local.post(.closed(alias, code: code, reason: reason), to: hub) }
        case .frame(let wire, let shared, let token, let supersedes, let targets):
            guard let target = targets.first(where: { $0.node == node }), let frame = FrameBytes(wire: wire) else { return }
            var (members, skip) = (target.members, target.skip)
            if let retired = state.withLock({ $0.edge.retired[sender] }) {
                members.removeAll { retired.contains($0) }
                guard !members.isEmpty else { return }
            }
            if members.count == 1, Self.isAnswer(frame) {
                let now = ContinuousClock.now
                state.withLock { $0.edge.answered(members[0], at: now) }
            }
            let relayed = RelayedFrame(frame: RelayableFrame(wire: frame, isShared: shared),
                                       token: token.map { Self.token($0, from: sender) }, supersedes: supersedes.map { Self.token($0, from: sender) })
            var byHub: [Int: [ConnectionID]] = [:]
            for member in members { byHub[LocalRelay.hub(of: member), default: []].append(member) }
            for (hub, ids) in byHub.sorted(by: { $0.key < $1.key }) where hub < local.hubs {
                local.post(.frame(relayed, to: ids, except: skip), to: hub)
            }
        case .close(let connection, let code, let reason):
            guard LocalRelay.hub(of: connection) < local.hubs else { return }
            let (retired, session) = state.withLock { ($0.edge.retired[sender]?.contains(connection) == true, $0.edge.sessions[connection]) }
            guard !retired else { return }
            if code == CloseCode.sessionMoved, let session {
                // The owner let the member go (it lost the session's lease, or lost track of the
                // member): its edge moves it in place when it can.
                return local.post(.moved(connection, session: session, reason: reason), to: LocalRelay.hub(of: connection))
            }
            local.post(.close(connection, code: code, reason: reason), to: LocalRelay.hub(of: connection))
        case .membership(let connection, let session):
            guard LocalRelay.hub(of: connection) < local.hubs,
                  state.withLock({ $0.edge.retired[sender]?.contains(connection) != true }) else { return }
            let (changes, tell) = state.withLock { state in state.edge.membership(connection, session: session, from: sender, owners: &state.owners) }
            apply(changes)
            if let tell { send(.subscribed(session: tell), to: sender) }
            local.post(.membership(connection, session: session, from: index), to: LocalRelay.hub(of: connection))
        case .subscribed(let session):
            state.withLock { $0.owner.listens(sender, to: session, true) }
        case .unsubscribed(let session):
            state.withLock { $0.owner.listens(sender, to: session, false) }
        }
    }

    /// A transient frame's token from node `sender`, made unique among every node's tokens
    /// (the owner's are unique among its own hubs only).
    static func token(_ token: UInt64, from sender: Int) -> UInt64 {
        var z = token ^ (UInt64(sender) &* 0x9E37_79B9_7F4A_7C15)
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    // MARK: Ownership changes and outages

    /// The session's owner, if another node.
    func owner(of session: String) -> Int? { state.withLock { $0.owners[session] } }

    /// Notes that `node` owns `session` (a load found its lease held there).
    func learnOwner(_ session: String, is node: Int) { state.withLock { $0.owners[session] = node } }

    /// Forgets the owner heard of for `session` (this node owns it now).
    func forgetOwner(_ session: String) { forgetOwners(of: [session]) }

    /// Forgets the owners heard of for `sessions` (this node holds their leases), under one lock.
    func forgetOwners(of sessions: [String]) {
        state.withLock { state in
            guard !state.owners.isEmpty else { return }
            for session in sessions { state.owners[session] = nil }
        }
    }

    /// Sessions owned elsewhere that members here are routed to (joined, or with a join on its
    /// way), with their owners.
    var routedOwners: [String: Int] {
        state.withLock { $0.edge.routedOwners($0.owners) }
    }

    /// The nodes that have members here (as aliases).
    var aliasNodes: Set<Int> { state.withLock { $0.owner.nodes } }

    /// `session` no longer has the owner it had: its members here are closed with
    /// ``CloseCode/sessionMoved`` (they join again, and find the new owner), and the owner is forgotten.
    func ownerChanged(_ session: String) {
        let members = state.withLock { state -> [ConnectionID] in
            state.owners[session] = nil
            return state.edge.members(of: session)
        }
        for member in members {
            local.post(.moved(member, session: session, reason: "session \(session) moved to another node"), to: LocalRelay.hub(of: member))
        }
    }

    /// Node `node` is gone: its members here leave their sessions, and members here routed
    /// to it are closed so that they join again.
    func nodeGone(_ node: Int) {
        let (aliases, routed) = state.withLock { state in
            for session in state.owners.filter({ $0.value == node }).map(\.key) { state.owners[session] = nil }
            return (state.owner.nodeGone(node), state.edge.routed(to: node))
        }
        for (alias, hubs) in aliases { for hub in hubs.sorted() { local.post(.closed(alias, code: nil, reason: "node \(node) is gone"), to: hub) } }
        for (member, session) in routed {
            let reason = "the owner of the session is gone"
            if let session {
                local.post(.moved(member, session: session, reason: reason), to: LocalRelay.hub(of: member))
            } else {
                local.post(.close(member, code: CloseCode.sessionMoved, reason: reason), to: LocalRelay.hub(of: member))
            }
        }
    }

    /// Edge: `connection` was moved in place out of `session` and joins again. What was kept for
    /// it goes as at a close (its old owner told, so that it lets the alias go), the nodes that
    /// served it are retired for it, and an owner of the session among them is forgotten: the
    /// join finds the session where it is now.
    private func handedOver(_ connection: ConnectionID, session: String) {
        leaveEdge(connection, code: CloseCode.sessionMoved, reason: "moved in place") { state, nodes in
            state.edge.retire(connection, from: nodes, session: session, owners: &state.owners)
        }
    }

    /// Edge: forgets what was kept for `connection` as a member served elsewhere (its routes, its
    /// unanswered requests, its interest), does `also` with the nodes that served it under the
    /// same lock, and tells those nodes it is gone.
    private func leaveEdge(_ connection: ConnectionID, code: UInt16?, reason: String, also: (inout State, Set<Int>) -> Void) {
        let (nodes, changes) = state.withLock { state in
            let left = state.edge.leave(connection)
            also(&state, left.nodes)
            return left
        }
        for node in nodes.sorted() {
            send(.closed(origin: RemoteConnection(node: self.node, connection: connection), code: code, reason: reason), to: node)
        }
        apply(changes)
    }

    /// The link to the other nodes broke (Redis unreachable, messages lost): every member
    /// served across nodes is let go (aliases leave their sessions; members here routed
    /// elsewhere are closed and resume), since what was lost cannot be told apart.
    func linkLost(_ reason: String) {
        let (aliases, routed) = state.withLock { state in
            state.owners.removeAll()
            return (state.owner.linkLost(), state.edge.linkLost())
        }
        for (alias, hubs) in aliases { for hub in hubs.sorted() { local.post(.closed(alias, code: nil, reason: reason), to: hub) } }
        for member in routed {
            local.post(.close(member, code: CloseCode.sessionMoved, reason: reason), to: LocalRelay.hub(of: member))
        }
    }

    /// Whether `frame` is the first frame of an answer to a request (``ServerMessage/isAnswer(_:)``).
    static func isAnswer(_ frame: FrameBytes) -> Bool {
        frame.opcode == 0x1 && frame.withPayload(ServerMessage.isAnswer)
    }

    /// Edge: closes with 4012 the local connections that have waited `limit` for another node's
    /// answer with none coming. Every request is answered (SPEC §2): an answer or a request lost
    /// between nodes (published while the link broke, Redis restarted, or a node's subscriber was
    /// reconnecting) must not leave a client waiting; it joins again (resuming), and the owner it
    /// finds then answers, its event stream saying what became of the request.
    func closeUnanswered(after limit: Duration) {
        let now = ContinuousClock.now
        let overdue = state.withLock { $0.edge.overdue(after: limit, at: now) }
        for member in overdue {
            local.post(.close(member, code: CloseCode.sessionMoved, reason: "the session's owner node did not answer within \(limit); join again"),
                       to: LocalRelay.hub(of: member))
        }
    }

    /// Messages sent to and received from other nodes.
    var traffic: (sent: Int, received: Int) { state.withLock { ($0.sent, $0.received) } }
}
