import MeridianAuth
import MeridianProtocol
import MeridianTransport
import MeridianSync

/// What the hubs of one server (one per service thread) hand each other. A session lives on
/// its home hub, which applies its commands in one total order; a member connected to another
/// hub (its edge) is served through these messages: its requests go to the home, and the home's
/// frames come back once per edge hub, which queues them for its own members.
enum RelayMessage: Sendable {
    /// Edge to home: a request of `connection` (whose handshake came from `peer`).
    case request(ClientRequest, from: ConnectionID, peer: String, handshakeGrant: AccessGrant?)
    /// Edge to home and back: a frame the edge answered with itself (a refused request), sent
    /// through the home so that it follows the answers to the connection's earlier requests.
    case echo(RelayedFrame, to: ConnectionID)
    /// Edge to home: the connection is gone.
    case closed(ConnectionID, code: UInt16?, reason: String)
    /// Home to edge: `frame` for the edge's `members` but `skip`. A transient frame carries its
    /// `token`; `supersedes` is the token of the earlier frame of its kind it makes redundant.
    case frame(RelayedFrame, to: [ConnectionID], except: ConnectionID?)
    /// To a session's home: an HTTP API request about the session.
    case http(HTTPRequest, HTTPResponder)
    /// Round the hubs: the session list or /metrics, gathering each hub's part.
    case gather(HubGather)
    /// Home to edge: close a member's connection.
    case close(ConnectionID, code: UInt16, reason: String)
    /// Home to edge: the member's session after its join, leave or replacement (nil: none),
    /// from hub `from`.
    case membership(ConnectionID, session: String?, from: Int)
    /// To another hub, from the home of session `for` when the server holds as many sessions as
    /// it may: unload your longest-idle empty session to make room.
    case evict(for: String, from: Int)
    /// The answer to `evict`, from hub `by`: whether it unloaded a session.
    case evicted(for: String, freed: Bool, by: Int)
    /// Home to edge: the connection's join went on to hub `to` (the session's owner is another
    /// node): its later requests wait for that hub's answer.
    case rerouted(ConnectionID, to: Int)
    /// To a session's home: this node no longer holds the session's lease (a cluster): unload it at once.
    case leaseLost(String)
    /// Gateway to edge: the member's session moved to another node (its owner died, gave the
    /// session up or lost track of the member): moved in place when its join asked for handover,
    /// else closed with 4012.
    case moved(ConnectionID, session: String, reason: String)
    /// Edge to gateway: the member was moved in place and joins again: its routes are forgotten,
    /// and nothing more from the nodes that served it reaches it.
    case handedOver(ConnectionID, session: String)
}

/// A frame encoded once by the home hub, on its way to the hubs of the members it is for.
/// It carries the frame's immutable bytes; the edge wraps them, without a copy, in a frame of
/// its own (its queues count their holders), and the home's frame never leaves the home.
struct RelayedFrame: Sendable {
    /// Read by the edge while the home may still be writing them to its own connections.
    let frame: RelayableFrame
    let token: UInt64?
    let supersedes: UInt64?
}

/// The seam between hubs: an in-process implementation now (``LocalRelay``), a cross-host one
/// for a cluster later. Messages from one hub to another arrive in the order they were posted.
protocol Relay: Sendable {
    /// How many hubs there are; a connection's hub is the high byte of its id.
    var hubs: Int { get }
    /// In a cluster, the index (one past the last hub) that stands for the other nodes: a
    /// session owned elsewhere has it as its home, and other nodes' members have it as their hub.
    var gateway: Int? { get }
    /// The hub a session lives on (the gateway for a session another node owns).
    func home(of session: String) -> Int
    /// Hands `message` to hub `hub`.
    func post(_ message: RelayMessage, to hub: Int)
    /// Takes what was posted to `hub`, oldest first.
    func take(for hub: Int) -> [RelayMessage]
}

extension Relay {
    var gateway: Int? { nil }

    /// Hubs and the gateway: what a connection's hub can be.
    var routes: Int { hubs + (gateway == nil ? 0 : 1) }

    func home(of session: String) -> Int { localHome(of: session) }

    /// The hub of this process a session lives on: FNV-1a of its id, so that every hub agrees.
    func localHome(of session: String) -> Int {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in session.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x100_0000_01B3
        }
        return Int(hash % UInt64(hubs))
    }

    /// The hub `connection` is connected to.
    static func hub(of connection: ConnectionID) -> Int { Int(connection.tag) }
}

/// The relay between the hubs of one process: an inbox per hub, and a wake-up of that hub's
/// thread when its inbox stops being empty (so a busy hub drains many messages per wake-up).
final class LocalRelay: Relay {
    let hubs: Int
    private let inboxes: [Locked<[RelayMessage]>]
    private let wakes: Locked<[(@Sendable () -> Void)?]>

    init(hubs: Int) {
        self.hubs = hubs
        inboxes = (0..<hubs).map { _ in Locked([]) }
        wakes = Locked(Array(repeating: nil, count: hubs))
    }

    /// Sets how hub `hub`'s thread is woken to take its messages (before anything is posted).
    func onPost(to hub: Int, wake: @escaping @Sendable () -> Void) {
        wakes.withLock { $0[hub] = wake }
        // Posted before the wake-up was set: later posts find the inbox not empty and wake no one.
        if !inboxes[hub].withLock({ $0.isEmpty }) { wake() }
    }

    func post(_ message: RelayMessage, to hub: Int) {
        let wasEmpty = inboxes[hub].withLock { messages in
            messages.append(message)
            return messages.count == 1
        }
        if wasEmpty, let wake = wakes.withLock({ $0[hub] }) { wake() }
    }

    func take(for hub: Int) -> [RelayMessage] {
        inboxes[hub].withLock { messages in
            defer { messages.removeAll(keepingCapacity: true) }
            return messages
        }
    }
}
