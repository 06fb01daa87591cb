import Foundation
import MeridianTransport

/// Where the hub's frames go, and its clock: the seam between the hub's logic and the
/// transport. A server's ``ServerLoop`` is the production one; tests drive the hub through an
/// in-memory one. It belongs to the hub's thread and is not `Sendable`: other threads hand
/// work back through its ``thread``.
protocol Outbound: AnyObject {
    /// Monotonic time of the hub's clock.
    var now: Duration { get }
    /// Wall-clock time, for what is dated (tokens' expiry).
    var date: Date { get }
    /// Where frames shared by many connections (welcome fragments) are accounted.
    var sharedFrames: SharedFrameLedger { get }
    /// Queues `frame` for one connection.
    func send(_ frame: OutboundFrame, to connection: ConnectionID)
    /// Queues `frame` for every connection of `members` but `skip`. A `transient` frame (a camera
    /// or drag move) may be superseded by a later one of its kind; `previous`, the earlier one of
    /// the same kind, may be dropped where it still waits.
    func broadcast(_ frame: OutboundFrame, to members: [ConnectionID], except skip: ConnectionID?, superseding previous: OutboundFrame?, transient: Bool)
    /// Closes a connection with a WebSocket close code and reason.
    func close(_ connection: ConnectionID, code: UInt16, reason: String)
    /// The transport's counters (for /metrics).
    var transportStats: TransportStats { get }
    /// The hub's thread, to which other threads hand results back.
    var thread: any HubThread { get }
}

extension Outbound {
    func broadcast(_ frame: OutboundFrame, to members: [ConnectionID]) {
        broadcast(frame, to: members, except: nil, superseding: nil, transient: false)
    }
}

/// A hub's thread seen from any thread: work handed to it runs there soon, in order.
protocol HubThread: Sendable {
    /// Runs `work` on the hub's thread; callable from any thread.
    func enqueue(_ work: @escaping @Sendable () -> Void)
    /// True on the hub's thread.
    var isCurrent: Bool { get }
}

/// A value of a hub's thread (the hub, its outbound, a continuation) carried through another
/// thread and back: it may be read only on its own thread, which every read checks (as NIO's
/// `NIOLoopBound` does). That check is what makes carrying it `Sendable`.
struct LoopBound<Value>: @unchecked Sendable {
    private let confined: Value
    private let thread: any HubThread

    init(_ value: Value, on thread: any HubThread) {
        precondition(thread.isCurrent, "a LoopBound value is made on its own thread")
        self.confined = value
        self.thread = thread
    }

    var value: Value {
        precondition(thread.isCurrent, "a LoopBound value is read only on its own thread")
        return confined
    }
}

/// A completion for work done on another thread (a store's read or write): it hands its result
/// back to `server`'s thread, where `body` runs with `owner` (a value of that thread) and `server`.
func returning<Owner, Result: Sendable>(
    _ owner: Owner, to server: any Outbound, _ body: @escaping (Owner, any Outbound, Result) -> Void
) -> @Sendable (Result) -> Void {
    let thread = server.thread
    let bound = LoopBound((owner: owner, server: server, body: body), on: thread)
    return { result in
        thread.enqueue {
            let bound = bound.value
            bound.body(bound.owner, bound.server, result)
        }
    }
}

extension ServerLoop: Outbound {
    var date: Date { Date() }
    var transportStats: TransportStats { stats }
    var thread: any HubThread { server }

    func broadcast(_ frame: OutboundFrame, to members: [ConnectionID], except skip: ConnectionID?, superseding previous: OutboundFrame?, transient: Bool) {
        broadcast(frame, to: members, except: skip, superseding: previous)
    }
}

extension WebSocketServer: HubThread {
    func enqueue(_ work: @escaping @Sendable () -> Void) { execute { _ in work() } }
    var isCurrent: Bool { isOnServiceThread }
}
