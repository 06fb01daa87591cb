import DequeModule
import Dispatch
import MeridianSync

/// A ``Broker`` in memory, shared by the nodes of a cluster in one process: each node takes a
/// ``Client`` of its own. Expiry follows the broker's clock, which only ``advance(by:)`` moves;
/// messages wait in one queue, in the order they were published, until ``deliver()`` hands
/// them to their subscribers. It keeps what ``RedisBroker`` keeps, with the same rules
/// (``RedisBroker``'s scripts), so that the contract tests hold for both.
///
/// Faults, per client: ``Client/cut()`` (its calls fail as with a Redis out of reach, its
/// messages are lost and reported, its subscribers hear `.disconnected` and nothing after),
/// ``Client/stall()`` (its calls time out, and messages from and to it wait, kept, until
/// ``Client/heal()``), and ``reset()`` for the whole broker (a Redis restarted without
/// persistence: every key gone, counters too; every subscriber disconnected and subscribed again).
final class MemoryBroker: Sendable {
    /// What the broker keeps: the keys ``ClusterKeys`` names in Redis.
    fileprivate struct Store {
        var leases: [String: (lease: Lease, expires: Duration)] = [:]
        var fences: [String: UInt64] = [:]
        var nodeCounter = 0
        var nodes: [Int: (address: String, expires: Duration)] = [:]
        var overview: [Int: [UInt8]] = [:]
    }

    enum Fault: Hashable, Sendable {
        case cut
        case stalled
    }

    private struct Subscriber {
        var client: Int
        var handler: @Sendable (ChannelEvent) -> Void
        var wanted: Set<String> = []
        var confirmed: Set<String> = []
        /// Heard `.connected` since its last `.disconnected`.
        var connected = false
    }

    private struct Publisher {
        var client: Int
        var onLost: @Sendable (Int, BrokerError) -> Void
    }

    private enum Delivery {
        case event(subscriber: Int, ChannelEvent)
        case lost(publisher: Int, BrokerError)
    }

    private struct State: Awaitable {
        var now: Duration = .zero
        var store = Store()
        var faults: [Int: Fault] = [:]
        var subscribers: [Int: Subscriber] = [:]
        var publishers: [Int: Publisher] = [:]
        var nextID = 1
        /// Deliveries due, oldest first.
        var queue: Deque<Delivery> = []
        /// A stalled client's messages: published by it, and due to its subscribers.
        var heldPublications: [Int: [(publisher: Int, channel: String, payload: [UInt8])]] = [:]
        var heldDeliveries: [Int: [Delivery]] = [:]
        var waiters: [DispatchSemaphore] = []

        mutating func takeWaiters() -> [DispatchSemaphore] {
            defer { waiters.removeAll() }
            return waiters
        }

        mutating func makeID() -> Int {
            defer { nextID += 1 }
            return nextID
        }
    }

    private let state = Locked(State())

    init() {}

    /// A new client of the broker, for one node.
    func client() -> Client { Client(broker: self, id: state.withLock { $0.makeID() }) }

    /// The broker's clock, from zero.
    var now: Duration { state.withLock { $0.now } }

    /// Moves the clock on: leases and node entries whose time has come expire.
    func advance(by duration: Duration) { state.withLock { $0.now += duration } }

    /// Forgets every key (as a Redis restarted without persistence); every subscriber hears
    /// `.disconnected`, and those of clients not cut off or stalled are subscribed again at once.
    func reset() {
        let waiters = state.withLock { state in
            state.store = Store()
            let error = BrokerError(.unreachable, "memory broker: restarted")
            for id in state.subscribers.keys.sorted() {
                state.subscribers[id]!.confirmed = []
                if state.subscribers[id]!.connected {
                    state.subscribers[id]!.connected = false
                    state.queue.append(.event(subscriber: id, .disconnected(error)))
                }
                if state.faults[state.subscribers[id]!.client] == nil { Self.resubscribe(id, &state) }
            }
            return state.takeWaiters()
        }
        for waiter in waiters { waiter.signal() }
    }

    /// Hands every queued message and event to its subscriber (and every lost message to its
    /// publisher), including those the handlers publish meanwhile; returns how many.
    @discardableResult
    func deliver() -> Int {
        var count = 0
        while let next = takeDelivery() {
            next()
            count += 1
        }
        return count
    }

    /// Deliveries waiting.
    var pending: Int { state.withLock { $0.queue.count } }

    private func takeDelivery() -> (@Sendable () -> Void)? {
        state.withLock { state -> (@Sendable () -> Void)? in
            while let next = state.queue.popFirst() {
                switch next {
                case .event(let id, let event):
                    guard let handler = state.subscribers[id]?.handler else { continue }
                    return { handler(event) }
                case .lost(let id, let error):
                    guard let onLost = state.publishers[id]?.onLost else { continue }
                    return { onLost(1, error) }
                }
            }
            return nil
        }
    }

    // MARK: Faults

    fileprivate func setFault(_ fault: Fault?, of client: Int) {
        let waiters = state.withLock { state in
            let old = state.faults[client]
            state.faults[client] = fault
            let subscribers = state.subscribers.filter { $0.value.client == client }.keys.sorted()
            switch fault {
            case .cut:
                let error = BrokerError(.unreachable, "memory broker: client \(client) is cut off")
                // What waited for a stalled client is lost with its link.
                for held in state.heldPublications.removeValue(forKey: client) ?? [] {
                    state.queue.append(.lost(publisher: held.publisher, error))
                }
                state.heldDeliveries[client] = nil
                for id in subscribers {
                    state.subscribers[id]!.confirmed = []
                    if state.subscribers[id]!.connected {
                        state.subscribers[id]!.connected = false
                        state.queue.append(.event(subscriber: id, .disconnected(error)))
                    }
                }
            case .stalled:
                break
            case nil:
                guard old != nil else { break }
                // Messages due to the client, then the ones it published, in order.
                state.queue.append(contentsOf: state.heldDeliveries.removeValue(forKey: client) ?? [])
                for held in state.heldPublications.removeValue(forKey: client) ?? [] {
                    Self.fanOut(held.payload, to: held.channel, &state)
                }
                for id in subscribers { Self.resubscribe(id, &state) }
            }
            return state.takeWaiters()
        }
        for waiter in waiters { waiter.signal() }
    }

    /// Confirms what subscriber `id` wants and not yet has, and reports it connected.
    private static func resubscribe(_ id: Int, _ state: inout State) {
        guard var subscriber = state.subscribers[id] else { return }
        for channel in subscriber.wanted.subtracting(subscriber.confirmed).sorted() {
            state.queue.append(.event(subscriber: id, .subscribed(channel: channel)))
        }
        subscriber.confirmed = subscriber.wanted
        if !subscriber.connected {
            subscriber.connected = true
            state.queue.append(.event(subscriber: id, .connected))
        }
        state.subscribers[id] = subscriber
    }

    /// Queues `payload` for every subscriber that hears `channel` now.
    private static func fanOut(_ payload: [UInt8], to channel: String, _ state: inout State) {
        for (id, subscriber) in state.subscribers.sorted(by: { $0.key < $1.key }) where subscriber.confirmed.contains(channel) {
            let delivery = Delivery.event(subscriber: id, .message(channel: channel, payload: payload))
            switch state.faults[subscriber.client] {
            case .cut: break
            case .stalled: state.heldDeliveries[subscriber.client, default: []].append(delivery)
            case nil: state.queue.append(delivery)
            }
        }
    }

    /// Runs `body` on the store for `client`, unless it is cut off or stalled.
    fileprivate func serve<T: Sendable>(_ client: Int, _ body: (inout Store, Duration) -> T) throws(BrokerError) -> T {
        try state.withLock { (state: inout State) throws(BrokerError) -> T in
            switch state.faults[client] {
            case .cut: throw BrokerError(.unreachable, "memory broker: client \(client) is cut off")
            case .stalled: throw BrokerError(.unreachable, "memory broker: client \(client) stalled: no reply")
            case nil: return body(&state.store, state.now)
            }
        }
    }

    fileprivate func publish(_ payload: [UInt8], to channel: String, from publisher: Int) {
        state.withLock { state in
            guard let client = state.publishers[publisher]?.client else { return }
            switch state.faults[client] {
            case .cut: state.queue.append(.lost(publisher: publisher, BrokerError(.unreachable, "memory broker: client \(client) is cut off")))
            case .stalled: state.heldPublications[client, default: []].append((publisher, channel, payload))
            case nil: Self.fanOut(payload, to: channel, &state)
            }
        }
    }

    fileprivate func addPublisher(_ client: Int, onLost: @escaping @Sendable (Int, BrokerError) -> Void) -> Int {
        state.withLock { state in
            let id = state.makeID()
            state.publishers[id] = Publisher(client: client, onLost: onLost)
            return id
        }
    }

    fileprivate func removePublisher(_ id: Int) { state.withLock { _ = $0.publishers.removeValue(forKey: id) } }

    fileprivate func addSubscriber(_ client: Int, handler: @escaping @Sendable (ChannelEvent) -> Void) -> Int {
        state.withLock { state in
            let id = state.makeID()
            state.subscribers[id] = Subscriber(client: client, handler: handler)
            if state.faults[client] == nil { Self.resubscribe(id, &state) }
            return id
        }
    }

    fileprivate func removeSubscriber(_ id: Int) {
        let waiters = state.withLock { state in
            state.subscribers[id] = nil
            return state.takeWaiters()
        }
        for waiter in waiters { waiter.signal() }
    }

    fileprivate func subscribe(_ id: Int, _ channel: String, _ on: Bool) {
        let waiters = state.withLock { state -> [DispatchSemaphore] in
            guard var subscriber = state.subscribers[id] else { return [] }
            if on {
                guard subscriber.wanted.insert(channel).inserted else { return [] }
                state.subscribers[id] = subscriber
                // Confirmed at once while the link is up; otherwise once it is back.
                if state.faults[subscriber.client] == nil { Self.resubscribe(id, &state) }
            } else {
                subscriber.wanted.remove(channel)
                subscriber.confirmed.remove(channel)
                state.subscribers[id] = subscriber
            }
            return state.takeWaiters()
        }
        for waiter in waiters { waiter.signal() }
    }

    fileprivate func waitUntilSubscribed(_ id: Int, _ channel: String) {
        state.wait { state in state.subscribers[id].map { $0.confirmed.contains(channel) } ?? true }
    }

    /// One node's view of the broker; its faults are set here.
    final class Client: Broker {
        let broker: MemoryBroker
        let id: Int

        fileprivate init(broker: MemoryBroker, id: Int) {
            self.broker = broker
            self.id = id
        }

        /// Calls fail as if Redis were out of reach; messages are lost; subscribers are disconnected.
        func cut() { broker.setFault(.cut, of: id) }
        /// Calls time out; messages from and to this client wait until ``heal()``.
        func stall() { broker.setFault(.stalled, of: id) }
        /// Back to normal: subscribers are subscribed again, held messages go on.
        func heal() { broker.setFault(nil, of: id) }

        // MARK: LeaseStore (the rules of RedisBroker's scripts)

        func acquire(_ session: String, node: Int, ttl: Duration) throws(BrokerError) -> SessionLeases.Answer {
            try broker.serve(id) { store, now in
                guard let held = MemoryBroker.lease(session, store, now) else {
                    let fence = store.fences[session, default: 0] + 1
                    store.fences[session] = fence
                    let lease = Lease(node: node, fence: fence)
                    store.leases[session] = (lease, now + ttl)
                    return .granted(lease)
                }
                if held.lease.node == node {
                    store.leases[session]!.expires = now + ttl
                    return .granted(held.lease)
                }
                return .held(held.lease, remaining: Self.wholeMilliseconds(held.expires - now))
            }
        }

        func renew(_ leases: [String: Lease], ttl: Duration) throws(BrokerError) -> Set<String> {
            try broker.serve(id) { store, now in
                var lost: Set<String> = []
                for (session, lease) in leases {
                    if MemoryBroker.lease(session, store, now)?.lease == lease {
                        store.leases[session]!.expires = now + ttl
                    } else {
                        lost.insert(session)
                    }
                }
                return lost
            }
        }

        func advance(_ session: String, _ lease: Lease, node: Int, past stored: UInt64) throws(BrokerError) -> Lease? {
            try broker.serve(id) { store, now in
                guard let held = MemoryBroker.lease(session, store, now), held.lease == lease else { return nil }
                var fence = store.fences[session, default: 0]
                fence = fence <= stored ? stored + 1 : fence + 1
                store.fences[session] = fence
                let moved = Lease(node: node, fence: fence)
                store.leases[session] = (moved, held.expires)
                return moved
            }
        }

        func release(_ session: String, _ lease: Lease) throws(BrokerError) {
            try broker.serve(id) { store, now in
                if MemoryBroker.lease(session, store, now)?.lease == lease { store.leases[session] = nil }
            }
        }

        func holders(_ sessions: [String]) throws(BrokerError) -> [String: Lease] {
            try broker.serve(id) { store, now in
                var holders: [String: Lease] = [:]
                for session in sessions { holders[session] = MemoryBroker.lease(session, store, now)?.lease }
                return holders
            }
        }

        /// Redis counts a key's time to live in whole milliseconds.
        private static func wholeMilliseconds(_ duration: Duration) -> Duration {
            .milliseconds(max(0, RedisBroker.milliseconds(duration)))
        }

        // MARK: NodeDirectory

        func register() throws(BrokerError) -> Int {
            try broker.serve(id) { store, _ in
                store.nodeCounter += 1
                return store.nodeCounter
            }
        }

        func heartbeat(_ node: Int, address: String, ttl: Duration) throws(BrokerError) {
            try broker.serve(id) { store, now in store.nodes[node] = (address, now + ttl) }
        }

        func live(_ nodes: [Int]) throws(BrokerError) -> [Int: String] {
            try broker.serve(id) { store, now in
                var live: [Int: String] = [:]
                for node in nodes {
                    if let entry = store.nodes[node], entry.expires > now { live[node] = entry.address }
                }
                return live
            }
        }

        func leave(_ node: Int) throws(BrokerError) {
            try broker.serve(id) { store, _ in store.nodes[node] = nil }
        }

        // MARK: OverviewParts

        func share(_ part: String, from node: Int) throws(BrokerError) -> [(node: Int, value: [UInt8])] {
            try broker.serve(id) { store, _ in
                store.overview[node] = Array(part.utf8)
                return store.overview.sorted { $0.key < $1.key }.map { (node: $0.key, value: $0.value) }
            }
        }

        func drop(_ nodes: [Int]) throws(BrokerError) {
            try broker.serve(id) { store, _ in for node in nodes { store.overview[node] = nil } }
        }

        // MARK: ChannelBus

        func publisher(onLost: @escaping @Sendable (Int, BrokerError) -> Void) -> any ChannelPublisher {
            MemoryPublisher(broker: broker, id: broker.addPublisher(id, onLost: onLost))
        }

        func subscriber(_ handler: @escaping @Sendable (ChannelEvent) -> Void) -> any ChannelSubscriber {
            MemorySubscriber(broker: broker, id: broker.addSubscriber(id, handler: handler))
        }
    }

    /// The lease of `session` unless it has expired.
    private static func lease(_ session: String, _ store: Store, _ now: Duration) -> (lease: Lease, expires: Duration)? {
        guard let held = store.leases[session], held.expires > now else { return nil }
        return held
    }
}

private struct MemoryPublisher: ChannelPublisher {
    let broker: MemoryBroker
    let id: Int

    func publish(_ payload: [UInt8], to channel: String) { broker.publish(payload, to: channel, from: id) }
    func stop() { broker.removePublisher(id) }
}

private struct MemorySubscriber: ChannelSubscriber {
    let broker: MemoryBroker
    let id: Int

    func subscribe(_ channel: String) { broker.subscribe(id, channel, true) }
    func unsubscribe(_ channel: String) { broker.subscribe(id, channel, false) }
    func waitUntilSubscribed(_ channel: String) { broker.waitUntilSubscribed(id, channel) }
    func stop() { broker.removeSubscriber(id) }
}
