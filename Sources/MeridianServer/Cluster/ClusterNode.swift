import Foundation
import Logging
import MeridianProtocol
import MeridianStorage
import MeridianSync

/// This server as a node of a cluster: its number, its relay to the other nodes, and the
/// leases of the sessions it owns, which a thread of its own (the keeper) renews.
///
/// Every quarter of the lease time the keeper renews this node's liveness key and leases,
/// gives up the leases of unloaded sessions, and looks at the owners of the sessions members
/// here are routed to: a session whose owner changed (it died and its lease ran out, or gave
/// the session up) has those members closed with 4012, and they join again, at its new owner.
/// A lease this node failed to renew for three quarters of its time is given up at once,
/// whatever Redis says later: its session stops taking commands before another node can
/// take it over.
/// What /metrics shows of a cluster node.
struct ClusterFigures: Sendable {
    var leases = 0
    var linked = false
    var sent = 0
    var received = 0
    var failovers = 0
}

final class ClusterNode: Sendable {
    private struct State {
        /// Sessions this node owns: their lease and the hub they live on.
        var owned: [String: (lease: Lease, hub: Int)] = [:]
        /// Leases of unloaded sessions, to give up.
        var releases: [(String, Lease)] = []
        var lastRenewal = ContinuousClock.now
        /// The pub/sub link is up (subscribed to this node's inbox).
        var linked = false
        /// The keeper's last round reached Redis.
        var redisReached = true
        /// This node has a number and hears its inbox: it may own sessions.
        var joined = false
        /// Why the last attempt to join failed, while it has not joined.
        var joinFailure: String?
        var stopping = false
        var failovers = 0
    }

    let configuration: ClusterConfiguration
    var number: Int { gateway.node }
    let gateway: ClusterGateway
    let relay: ClusterRelay
    /// What the nodes share (``RedisBroker`` in production).
    private let broker: any Broker
    /// The overview's board: this node's part goes to Redis, the other nodes' parts come back.
    private let board: OverviewBoard
    private let leases = Locked<SessionLeases?>(nil)
    private let registry: NodeRegistry
    private let publisher: any ChannelPublisher
    private let subscriber: any ChannelSubscriber
    private let state = Locked(State())
    /// Joins, then keeps the leases; woken when a lease is to be given up.
    private let keeper = WorkerThread<Never>(name: "cluster-keeper")
    /// Gives the leases up when they were not renewed in time; woken by each renewal.
    private let leaseWatch = WorkerThread<Never>(name: "lease-watch")
    private let logger: Logger

    /// A node for a server of `hubs` hubs, on `broker` (``RedisBroker`` on the Redis of
    /// `configuration` in production); it joins the cluster in ``start()``.
    init(configuration: ClusterConfiguration, broker: any Broker, hubs: Int, board: OverviewBoard, logger: Logger = Logger(label: "meridian")) {
        self.configuration = configuration
        self.board = board
        self.logger = logger
        self.broker = broker
        registry = NodeRegistry(directory: broker, ttl: configuration.leaseTTL)
        let lost = Locked<ClusterGateway?>(nil)
        publisher = broker.publisher { count, error in
            lost.withLock { $0 }?.linkLost("cluster link lost: \(count) messages not published: \(error.message)")
        }
        let local = LocalRelay(hubs: hubs)
        let gateway = ClusterGateway(local: local, publisher: publisher)
        self.gateway = gateway
        relay = ClusterRelay(local: local, cluster: gateway)
        lost.withLock { $0 = gateway }
        let state = self.state
        // The subscriber connects (and reconnects) by itself; the inbox is added once the node has a number.
        subscriber = broker.subscriber { event in
            switch event {
            case .message(_, let payload):
                gateway.receive(payload)
            case .connected:
                state.withLock { $0.linked = true }
            case .subscribed(let channel):
                gateway.confirmed(channel)
            case .disconnected(let error):
                let wasLinked = state.withLock { state in
                    defer { state.linked = false }
                    return state.linked
                }
                if wasLinked { gateway.linkLost("cluster link lost: \(error.message)") }
            }
        }
        gateway.subscriber.withLock { $0 = subscriber }
    }

    /// Starts the keeper, which joins the cluster — takes a node number and hears this node's
    /// inbox — and then keeps its leases. Until it has joined (Redis out of reach at start-up:
    /// it tries again and again, waiting longer each time, up to a lease time) the node owns no
    /// session, joins are refused with `storage_unavailable`, and /readyz says why.
    func start() {
        keeper.start { turns in self.keep(turns) }
        leaseWatch.start { turns in self.watchLeases(turns) }
    }

    /// Gives every session up once three quarters of the lease time have passed since the last
    /// renewal was sent, whatever the keeper is doing: a keeper blocked in a call to a Redis cut
    /// off (each call waits up to its timeout) would notice only when its call fails, as late as
    /// the lease's end in Redis, when another node may already own the session.
    private func watchLeases(_ turns: WorkerThread<Never>.Turns) {
        let margin = configuration.leaseTTL * 3 / 4
        var nextLook = ContinuousClock.now
        while turns.next(until: nextLook) != nil {
            let deadline = state.withLock { $0.lastRenewal + margin }
            if ContinuousClock.now < deadline {
                nextLook = deadline
                continue
            }
            let owned = state.withLock { state -> [(String, Int)] in
                guard ContinuousClock.now >= state.lastRenewal + margin else { return [] }
                return state.owned.map { ($0.key, $0.value.hub) }.sorted { $0.0 < $1.0 }
            }
            if !owned.isEmpty {
                logger.warning("leases not renewed for three quarters of their time: sessions given up", metadata: ["sessions": "\(owned.count)"])
            }
            for (session, hub) in owned { giveUp(session, hub) }
            // Until the next renewal, sessions taken meanwhile have leases of their own.
            nextLook = .now + configuration.leaseTTL / 4
        }
    }

    /// One attempt to join: a node number, then this node's inbox confirmed by Redis. False while
    /// Redis is out of reach (the reason is kept for /readyz and logged) or the node stops.
    func join() -> Bool {
        let number: Int
        do throws(BrokerError) {
            number = try registry.register(address: configuration.advertise)
        } catch {
            let first = state.withLock { state in
                defer { state.joinFailure = error.message }
                return state.joinFailure == nil
            }
            if first { logger.warning("cannot join the cluster yet; trying again", metadata: ["redis": "\(configuration.redis)", "reason": "\(error.message)"]) }
            return false
        }
        gateway.assign(node: number)
        let inbox = ClusterKeys.inbox(number)
        subscriber.subscribe(inbox)
        // Returns once Redis confirmed the inbox, or when the subscriber stops (the node stops).
        subscriber.waitUntilSubscribed(inbox)
        guard !state.withLock({ $0.stopping }) else { return false }
        leases.withLock { $0 = SessionLeases(store: broker, node: number, ttl: configuration.leaseTTL) }
        state.withLock { state in
            state.joined = true
            state.joinFailure = nil
            state.lastRenewal = .now
        }
        logger.info("joined the cluster", metadata: ["node": "\(number)", "redis": "\(configuration.redis)"])
        return true
    }

    /// Gives up every lease, leaves the cluster and ends the threads.
    func stop() {
        state.withLock { $0.stopping = true }
        // Ends a join waiting for its inbox, then the watch and the keeper (when they were started).
        subscriber.stop()
        leaseWatch.stop()
        keeper.stop()
        let owned = state.withLock { state in
            defer { state.owned.removeAll() }
            return state.owned.map { ($0.key, $0.value.lease) } + state.releases
        }
        for (session, lease) in owned { try? leases.withLock({ $0 })?.release(session, lease) }
        if state.withLock({ $0.joined }) {
            try? registry.leave(number)
            try? broker.drop([number])
        }
        publisher.stop()
    }

    /// Why this node cannot serve now (for /readyz): cut off from the cluster's Redis.
    var unreadiness: String? {
        let (joined, failure, linked, reached) = state.withLock { ($0.joined, $0.joinFailure, $0.linked, $0.redisReached) }
        if !joined { return "not joined to the cluster at \(configuration.redis) yet" + (failure.map { ": \($0)" } ?? "") }
        if !linked { return "no link to the other nodes through \(configuration.redis)" }
        if !reached { return "the cluster's Redis at \(configuration.redis) does not answer" }
        return nil
    }

    var figures: ClusterFigures {
        let (leases, failovers, linked) = state.withLock { ($0.owned.count, $0.failovers, $0.linked) }
        let traffic = gateway.traffic
        return ClusterFigures(leases: leases, linked: linked, sent: traffic.sent, received: traffic.received, failovers: failovers)
    }

    /// On a storage reader thread, before a session is loaded for hub `hub`: its lease (this
    /// node owns it now), or nil when another node owns it (the gateway then routes to it).
    func acquire(_ session: String, hub: Int) throws(StorageError) -> Lease? {
        guard let leases = leases.withLock({ $0 }) else { throw .readFailed("this node has not joined its cluster") }
        let answer: SessionLeases.Answer
        do throws(BrokerError) {
            answer = try leases.acquire(session)
        } catch {
            throw .readFailed("the cluster's Redis: \(error.message)")
        }
        switch answer {
        case .granted(let lease):
            state.withLock { state in
                if lease.fence > 1, state.owned[session] == nil { state.failovers += 1 }
                state.owned[session] = (lease, hub)
                // The owner now: joins here are served here, whatever owner was heard of before.
                gateway.forgetOwner(session)
            }
            return lease
        case .held(let lease, _):
            heard(session, heldBy: lease.node)
            return nil
        }
    }

    /// Another node holds `session`'s lease, as a load found: joins here go to it. Two loads'
    /// answers may cross (one read the lease before the old owner's ran out, the other took it
    /// after): one that comes once this node holds the lease itself is old news, and kept, it
    /// would send the joins of the session this node serves to a node that sends them back.
    func heard(_ session: String, heldBy node: Int) {
        state.withLock { state in
            guard state.owned[session] == nil else { return }
            gateway.learnOwner(session, is: node)
        }
    }

    /// After the session was read under `lease`, `stored` being the fence the store held before
    /// the lease's claim: a lease whose fence is not above it is moved past it (see
    /// ``SessionLeases/advance(_:_:past:)``). Nil: the lease was lost meanwhile.
    func settle(_ session: String, _ lease: Lease, stored: UInt64) throws(StorageError) -> Lease? {
        guard stored >= lease.fence else { return lease }
        guard let leases = leases.withLock({ $0 }) else { throw .readFailed("this node has not joined its cluster") }
        do throws(BrokerError) {
            let moved = try leases.advance(session, lease, past: stored)
            state.withLock { state in
                if let moved, state.owned[session]?.lease == lease { state.owned[session]?.lease = moved }
            }
            return moved
        } catch {
            throw .readFailed("the cluster's Redis: \(error.message)")
        }
    }

    /// Whether this node still holds `session`'s lease with `fence`. A load takes the lease
    /// before it reads; the lease may be given up before the load is done (its renewal failed,
    /// or three quarters of its time passed), and a session loaded under a lease no longer held
    /// would be served with nobody renewing it and another node free to take it.
    func holds(_ session: String, fence: UInt64) -> Bool {
        state.withLock { $0.owned[session]?.lease.fence == fence }
    }

    /// The session was unloaded here: its lease is given up.
    func release(_ session: String) {
        state.withLock { state in
            if let owned = state.owned.removeValue(forKey: session) { state.releases.append((session, owned.lease)) }
        }
        keeper.wake()
    }

    /// How long an edge lets a connection wait for another node's answers with none coming
    /// before it closes it with 4012 to join again: longer than an owner takes to answer when its
    /// store is slow (PostgreSQL's 15-s operation timeout, then `storage_unavailable`) or to take
    /// a lease and load a large session, below a client's patience.
    static func answerLimit(_ leaseTTL: Duration) -> Duration { max(.seconds(16), leaseTTL * 4) }

    /// The keeper's loop: joins, then keeps the leases every quarter of the lease time, counted
    /// from the start of each round (and at once when a lease is to be given up).
    private func keep(_ turns: WorkerThread<Never>.Turns) {
        var backoff = Duration.milliseconds(250)
        while !state.withLock({ $0.stopping }), !join() {
            guard turns.next(until: .now + backoff) != nil else { return }
            backoff = min(backoff * 2, configuration.leaseTTL)
        }
        let period = configuration.leaseTTL / 4
        var due = ContinuousClock.now + period
        while turns.next(until: due) != nil {
            guard !state.withLock({ $0.stopping }) else { break }
            let started = ContinuousClock.now
            keepOnce()
            let took = ContinuousClock.now - started
            if took > period, state.withLock({ $0.redisReached }) {
                logger.warning("a round of the cluster keeper took longer than its period", metadata: ["took": "\(took)", "period": "\(period)"])
            }
            // A period after this round began, not after it ended: a slow round (the overview,
            // the owners of routed sessions) does not put the next renewal off.
            due = started + period
        }
    }

    /// One round of the keeper (the tests of nodes in memory call it themselves).
    func keepOnce() {
        guard let leases = leases.withLock({ $0 }) else { return }
        let (owned, releases) = state.withLock { state in
            defer { state.releases.removeAll() }
            return (state.owned, state.releases)
        }
        // Redis extends the leases from when it serves the renewal, after this: the leases are
        // this node's for sure until a lease time after `sent`.
        let sent = ContinuousClock.now
        do throws(BrokerError) {
            try registry.heartbeat(number, address: configuration.advertise)
            let lost = try leases.renew(owned.mapValues(\.lease))
            state.withLock { state in
                state.lastRenewal = sent
                state.redisReached = true
            }
            leaseWatch.wake()
            // A lease moved on meanwhile (past a stored fence, as a load settled it) was not the
            // one renewed: it stays, for the next round.
            for session in lost.sorted() { giveUp(session, owned[session]!.hub, ifStill: owned[session]!.lease) }
            gateway.forgetOwners(of: owned.keys.filter { !lost.contains($0) })
            for (session, lease) in releases { try leases.release(session, lease) }
            let routed = gateway.routedOwners
            let holders = try leases.holders(Array(routed.keys))
            for (session, owner) in routed where holders[session]?.node != owner { gateway.ownerChanged(session) }
            gateway.closeUnanswered(after: Self.answerLimit(configuration.leaseTTL))
            let nodes = gateway.aliasNodes
            let live = try registry.live(Array(nodes))
            for node in nodes where live[node] == nil { gateway.nodeGone(node) }
            try shareOverview()
        } catch {
            // Unrenewed leases run out in Redis: give them up here first.
            let (stale, first) = state.withLock { state in
                defer { state.redisReached = false }
                return (ContinuousClock.now - state.lastRenewal > configuration.leaseTTL * 3 / 4, state.redisReached)
            }
            if first { logger.warning("the cluster's Redis does not answer", metadata: ["redis": "\(configuration.redis)", "reason": "\(error.message)"]) }
            if stale { for (session, entry) in owned.sorted(by: { $0.key < $1.key }) { giveUp(session, entry.hub) } }
        }
    }

    /// Posts this node's part of the overview and takes the other nodes' (those of live nodes:
    /// their liveness key, which the broker expires, still there; the parts of nodes that are gone
    /// are dropped). No node's wall clock is compared with another's: a node whose clock is
    /// stepped keeps its part, and sees the others'.
    private func shareOverview() throws(BrokerError) {
        let mine = board.local()
        let text = String(decoding: ServerMessage.overview(mine.entries, connections: mine.connections), as: UTF8.self)
        let parts = try broker.share(text, from: number).filter { $0.node != number }
        let live = try registry.live(parts.map(\.node))
        var entries: [OverviewEntry] = [], connections = 0, gone: [Int] = []
        for (node, value) in parts {
            guard live[node] != nil else { gone.append(node); continue }
            guard let part = ServerMessage.overviewEntries(value) else { continue }
            entries += part.entries
            connections += part.connections
        }
        board.post(otherNodes: entries, connections: connections)
        if !gone.isEmpty { try broker.drop(gone) }
    }

    /// The session's lease is not this node's any more: its home unloads it at once.
    private func giveUp(_ session: String, _ hub: Int, ifStill lease: Lease? = nil) {
        let removed = state.withLock { state -> Bool in
            guard let owned = state.owned[session], lease == nil || owned.lease == lease else { return false }
            state.owned[session] = nil
            return true
        }
        if removed { gateway.local.post(.leaseLost(session), to: hub) }
    }
}
