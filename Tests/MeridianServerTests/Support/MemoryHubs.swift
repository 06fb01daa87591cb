import Dispatch
import Logging
import MeridianCore
@testable import MeridianServer
import MeridianTransport

/// The hubs of one server driven in memory through their outbound seam: no sockets, no threads
/// of their own, the in-memory store (committed inline), a clock the test moves. Several hubs
/// (as on several service threads) are joined by the in-process relay; each has its own
/// ``MemoryOutbound``, and relayed messages and handed-back work run when the test settles
/// the hubs, so every interleaving is the test's. One hub is a server with one thread. With a
/// cluster node, the hubs are that node's (``MemoryCluster`` drives several).
final class MemoryHubs {
    let relay: LocalRelay
    let hubs: [Hub]
    let outbounds: [MemoryOutbound]
    private let workArrived: DispatchSemaphore
    private let storage = StorageSlot()
    private var nextConnection: UInt64 = 1
    private var nextRef = 1
    /// Messages received by each connection and not yet taken, oldest first.
    private var received: [ConnectionID: [JSONValue]] = [:]

    /// `count` hubs; with `node`, the hubs of that cluster node, whose overview board is `board`.
    init(count: Int, configuration: ServerConfiguration = ServerConfiguration(), node: ClusterNode? = nil, board: OverviewBoard = OverviewBoard(),
         workArrived: DispatchSemaphore = DispatchSemaphore(value: 0)) throws {
        self.workArrived = workArrived
        try storage.open(configuration.storage, onBatch: { _ in })
        var logger = Logger(label: "memory-hubs")
        logger.logLevel = .critical
        let relay = node?.gateway.local ?? LocalRelay(hubs: count)
        let metrics = ServerMetrics(), eventLog = EventLog(), loads = LoadCounts()
        let outbounds = (0..<count).map { _ in MemoryOutbound(workArrived: workArrived) }
        let storage = self.storage
        let placed = count > 1 || node != nil
        let hubsRelay: any Relay = node.map { $0.relay as any Relay } ?? relay
        hubs = (0..<count).map { i in
            Hub(configuration: configuration, logger: logger, storage: storage, eventLog: eventLog, metrics: metrics,
                place: placed ? HubPlace(hub: i, relay: hubsRelay, board: board, loads: loads, cluster: node) : nil)
        }
        for i in 0..<count where placed {
            let thread = outbounds[i].thread
            let bound = LoopBound((hub: hubs[i], outbound: outbounds[i]), on: thread)
            relay.onPost(to: i) { thread.enqueue { bound.value.hub.takeRelayed(on: bound.value.outbound) } }
        }
        self.relay = relay
        self.outbounds = outbounds
    }

    deinit { storage.close() }

    /// The first of `candidates` whose home is `hub`.
    func session(homedOn hub: Int, prefix: String) -> String {
        (0...).lazy.map { "\(prefix)-\($0)" }.first { self.relay.home(of: $0) == hub }!
    }

    /// A new connection on hub `hub`.
    func connect(to hub: Int) -> ConnectionID {
        open(on: hub, handshake: Handshake(peer: "127.0.0.1"))
    }

    /// A new connection on hub `hub` upgraded with `handshake`, as the transport opens one: the
    /// hub screens the handshake first, and a refused one never opens.
    func connect(to hub: Int, handshake: Handshake) throws(MemoryHubError) -> ConnectionID {
        if case .refuse(let status, let reason) = hubs[hub].gatekeeper.screen(handshake) {
            throw .handshakeRefused(status: status, reason: reason)
        }
        return open(on: hub, handshake: handshake)
    }

    private func open(on hub: Int, handshake: Handshake) -> ConnectionID {
        drive()
        defer { nextConnection += 1 }
        let id = ConnectionID(tag: UInt8(hub), serial: UInt64(nextConnection))
        hubs[hub].open(id, handshake: handshake)
        return id
    }

    private func hub(of connection: ConnectionID) -> Int { Int(connection.tag) }

    func disconnect(_ connection: ConnectionID) {
        closed(connection, code: 1000, reason: "")
    }

    /// The connection is gone with `code`, as the transport reports a close (the client's, or
    /// the end of one the hub started).
    func closed(_ connection: ConnectionID, code: UInt16?, reason: String) {
        drive()
        hubs[hub(of: connection)].closed(connection, code: code, reason: reason, on: outbounds[hub(of: connection)])
        settle()
    }

    /// One whole text message from `connection`, as it came (not necessarily valid JSON).
    func receive(_ bytes: [UInt8], from connection: ConnectionID) {
        drive()
        let h = hub(of: connection)
        bytes.withUnsafeBytes { hubs[h].receive($0, from: connection, on: outbounds[h]) }
    }

    func tick() {
        drive()
        for (hub, outbound) in zip(hubs, outbounds) { hub.tick(on: outbound) }
        settle()
    }

    /// Sends a request without waiting; returns its ref.
    @discardableResult
    func post(_ type: String, _ fields: [String: JSONValue] = [:], from connection: ConnectionID) -> String {
        let ref = "r\(nextRef)"
        nextRef += 1
        var message = fields
        message["type"] = .string(type)
        message["ref"] = .string(ref)
        receive(JSONValue.object(message).encoded, from: connection)
        return ref
    }

    /// Sends a request and returns its answer, settling the hubs until it comes.
    @discardableResult
    func request(_ type: String, _ fields: [String: JSONValue] = [:], from connection: ConnectionID) throws -> JSONValue {
        try answer(post(type, fields, from: connection), to: connection)
    }

    /// The answer to `ref`, settling the hubs (and waiting for work from the store's threads)
    /// until it comes; the messages before it stay queued.
    func answer(_ ref: String, to connection: ConnectionID) throws -> JSONValue {
        while true {
            settle()
            if let answer = take(ref, to: connection) { return answer }
            guard workArrived.wait(timeout: .now() + .seconds(5)) == .success else { throw MemoryHubError.noAnswer(ref) }
            workArrived.signal()
        }
    }

    /// The answer to `ref` if it has come (taken from the mailbox), without settling.
    func take(_ ref: String, to connection: ConnectionID) -> JSONValue? {
        guard let index = mailbox(connection).firstIndex(where: { $0["ref"]?.string == ref }) else { return nil }
        return received[connection]!.remove(at: index)
    }

    /// Settles the hubs, then, while a session load is in flight on a reader thread, waits for
    /// the work it hands back and settles again; false if a load did not end within 5 s.
    @discardableResult
    func settleLoads() -> Bool {
        settle()
        while hubs.contains(where: { !$0.durability.gates.isEmpty }) {
            guard workArrived.wait(timeout: .now() + .seconds(5)) == .success else { return false }
            workArrived.signal()
            settle()
        }
        return true
    }

    /// Runs relayed messages and handed-back work on every hub until none is left; true if any ran.
    @discardableResult
    func settle() -> Bool {
        drive()
        var ran = true, any = false
        while ran {
            ran = false
            for outbound in outbounds where outbound.runWork() { ran = true }
            any = any || ran
        }
        return any
    }

    func mailbox(_ connection: ConnectionID) -> [JSONValue] {
        for bytes in outbounds[hub(of: connection)].take(connection) {
            received[connection, default: []].append(JSONValue.parse(bytes) ?? .string(String(decoding: bytes, as: UTF8.self)))
        }
        return received[connection] ?? []
    }

    /// Takes every message `connection` received so far.
    func drain(_ connection: ConnectionID) -> [JSONValue] {
        settle()
        let all = mailbox(connection)
        received[connection] = []
        return all
    }

    /// The calling thread drives the hubs from now on: an async test may resume on another
    /// thread after an `await`.
    private func drive() {
        for outbound in outbounds { outbound.adoptCurrentThread() }
    }

    func closeCode(of connection: ConnectionID) -> UInt16? { outbounds[hub(of: connection)].closeCode(of: connection) }

    /// The code and reason the hub closed `connection` with, if it did.
    func closing(of connection: ConnectionID) -> (code: UInt16, reason: String)? { outbounds[hub(of: connection)].closing(of: connection) }
}
