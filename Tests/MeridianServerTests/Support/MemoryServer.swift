import MeridianCore
@testable import MeridianServer
import MeridianTransport

/// A server of one or several hubs (as of `threads` service threads) driven in memory, with the
/// API of ``TestServer``: clients connect to the hubs in turn, and the hubs' clock moves only
/// when the test moves it (``advance(by:)``); the periodic work runs when the test ticks.
final class MemoryServer {
    let memory: MemoryHubs
    /// Connections still open, in the order they connected.
    private var open: [ConnectionID] = []
    private var connected = 0

    init(threads: Int = 1, _ configure: (inout ServerConfiguration) -> Void = { _ in }) throws {
        var configuration = ServerConfiguration()
        configure(&configuration)
        memory = try MemoryHubs(count: threads, configuration: configuration)
    }

    var hubs: [Hub] { memory.hubs }

    /// A new connection on the next hub in turn; `handshake` is screened as the transport
    /// screens an upgrade (a refusal throws ``MemoryHubError/handshakeRefused(status:reason:)``).
    func client(handshake: Handshake = Handshake(peer: "127.0.0.1")) throws -> MemoryClient {
        let hub = connected % memory.hubs.count
        connected += 1
        let id = try memory.connect(to: hub, handshake: handshake)
        open.append(id)
        return MemoryClient(server: self, id: id)
    }

    /// A client joined to `session`, its welcome read.
    func joined(_ session: String, name: String, role: String = "editor", extra: [String: JSONValue] = [:]) throws -> MemoryClient {
        let c = try client()
        try c.join(session, name: name, role: role, extra: extra)
        return c
    }

    /// Runs everything the hubs have to do now: relayed messages, work handed back (waiting for
    /// session loads in flight), and the ends of the connections the hubs closed, which the
    /// hubs hear of as from the transport.
    func settle() {
        repeat {
            memory.settleLoads()
        } while reportClosings()
    }

    /// Reports to its hub each connection the hub closed since the last call; true if any.
    private func reportClosings() -> Bool {
        let closing = open.compactMap { id in memory.closing(of: id).map { (id, $0) } }
        for (id, close) in closing {
            open.removeAll { $0 == id }
            memory.closed(id, code: close.code, reason: close.reason)
        }
        return !closing.isEmpty
    }

    /// The client's end of `connection`: the hub hears that it closed.
    func disconnect(_ connection: ConnectionID) {
        guard let index = open.firstIndex(of: connection) else { return }
        open.remove(at: index)
        memory.disconnect(connection)
        settle()
    }

    /// Moves every hub's clock on by `duration` (the periodic work runs at the next ``tick()``).
    func advance(by duration: Duration) {
        for outbound in memory.outbounds { outbound.advance(by: duration) }
    }

    /// The periodic work of every hub, at the clock's time now.
    func tick() {
        memory.tick()
        settle()
    }
}
