import MeridianTransport

/// Where the hub's frames go, and its clock: the seam between the hub's logic and the
/// transport. ``WebSocketServer`` is the production one; tests drive the hub through an
/// in-memory one. Every method is called on the hub's own thread, but `execute`, which
/// other threads call to hand a result back.
protocol Outbound: AnyObject, Sendable {
    /// Monotonic time of the hub's clock.
    var now: Duration { get }
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
    /// Runs `body` on the hub's thread soon; callable from any thread.
    func execute(_ body: @escaping @Sendable () -> Void)
}

extension Outbound {
    func broadcast(_ frame: OutboundFrame, to members: [ConnectionID]) {
        broadcast(frame, to: members, except: nil, superseding: nil, transient: false)
    }
}

extension WebSocketServer: Outbound {
    var transportStats: TransportStats { stats }

    func broadcast(_ frame: OutboundFrame, to members: [ConnectionID], except skip: ConnectionID?, superseding previous: OutboundFrame?, transient: Bool) {
        broadcast(frame, to: members, except: skip, superseding: previous)
    }
}
