import MeridianAuth
import MeridianProtocol
import MeridianTransport
import MeridianSync

/// Where a hub stands among the hubs of one server: its index (the high byte of the ids of
/// its connections) and the relay to the others.
struct HubPlace {
    let hub: Int
    let relay: any Relay
    /// Where the hubs post their part of the overview (one for all of them).
    let board: OverviewBoard
    /// Each hub's sessions, loaded and loading, for the server's limit (one for all of them).
    let loads: LoadCounts
    /// This server as a node of a cluster (nil: a single node).
    var cluster: ClusterNode? = nil
}

/// Each hub's sessions, loaded and loading.
final class LoadCounts: Sendable {
    private let counts = Locked<[Int: (loaded: Int, loading: Int)]>([:])

    func post(loaded: Int, loading: Int, from hub: Int) { counts.withLock { $0[hub] = (loaded, loading) } }

    /// The other hubs' sessions: loaded, and loading.
    func total(except hub: Int) -> (loaded: Int, loading: Int) {
        counts.withLock { counts in
            counts.reduce((0, 0)) { sum, entry in entry.key == hub ? sum : (sum.0 + entry.value.loaded, sum.1 + entry.value.loading) }
        }
    }
}

/// Where an edge hub sends the requests of a connection whose session lives on another hub.
enum EdgeRoute {
    /// A join or a leave went to `home` and is not answered yet: later requests wait here, in
    /// order, until the home says what the connection's session is.
    case pending(home: Int, held: [ClientRequest])
    /// Joined a session of `home`: every request goes there.
    case joined(home: Int)

    var home: Int {
        switch self {
        case .pending(let home, _), .joined(let home): home
        }
    }
}

/// The relay seam (Relay.swift) seen from a hub. As an edge it forwards the requests of its
/// connections whose session lives elsewhere and queues the frames their home sends back; as
/// a home it serves forwarded requests as its own, with frames and closes routed back by
/// ``RoutedOutbound``. A single hub (no place) does none of this.
extension Hub {
    /// The outbound the hub's logic uses: `local` itself for a single hub, else the routing one.
    func outbound(for local: any Outbound) -> any Outbound {
        guard let place, !(local is RoutedOutbound) else { return local }
        if let routed, routed.local === local { return routed }
        let made = RoutedOutbound(local: local, relay: place.relay, hub: place.hub)
        routed = made
        return made
    }

    /// Tells the other hubs how many sessions this one holds (loaded and loading).
    func postLoad() {
        guard let place else { return }
        place.loads.post(loaded: sessions.count, loading: durability.loads, from: place.hub)
    }

    /// Whether `connection` is connected to this hub (not a member served for another hub).
    func isLocal(_ connection: ConnectionID) -> Bool {
        place.map { LocalRelay.hub(of: connection) == $0.hub } ?? true
    }

    /// True when this hub is only the edge of `connection` for `request`: it went to the home
    /// hub, or waits here for the home's answer to an earlier join or leave.
    func forwardedToHome(_ request: ClientRequest, from connection: ConnectionID) -> Bool {
        guard let place, isLocal(connection), let state = connections[connection] else { return false }
        // Behind a join that waits for its session here, requests wait here too (holdsBehindJoin).
        if durability.joins.tickets[connection] != nil { return false }
        if case .overviewWatch = request.body { return false }
        switch state.route {
        case .pending(let home, var held)?:
            guard held.count < Self.maxHeldRequests else {
                // Refused here, through the home (after the answers to what went before): served
                // here, a join would open its session on this hub, not on the session's home.
                metrics.error(.notJoined)
                metrics.messageOut("error")
                let frame = ServerMessage.error(
                    ref: request.ref, code: .notJoined,
                    message: "\(request.typeName): the join or leave before it is still waiting for its answer, with \(held.count) requests behind it")
                place.relay.post(.echo(RelayedFrame(frame: OutboundFrame(text: frame).relayable, token: nil, supersedes: nil), to: connection), to: home)
                return true
            }
            held.append(request)
            connections[connection]?.route = .pending(home: home, held: held)
            return true
        case .joined(let home)?:
            forward(request, from: connection, state: state, to: home, place: place)
            if case .leave = request.body { connections[connection]?.route = .pending(home: home, held: []) }
            return true
        case nil:
            guard case .join(let session, _, _) = request.body, state.sessionID == nil else { return false }
            let home = place.relay.home(of: session)
            guard home != place.hub, Self.isValidSessionID(session) else { return false }
            forward(request, from: connection, state: state, to: home, place: place)
            connections[connection]?.route = .pending(home: home, held: [])
            return true
        }
    }

    private func forward(_ request: ClientRequest, from connection: ConnectionID, state: ConnectionState, to home: Int, place: HubPlace) {
        connections[connection]?.homes |= 1 << UInt64(home)
        place.relay.post(.request(request, from: connection, peer: state.peer, handshakeGrant: state.handshakeGrant), to: home)
    }

    /// Sends a reply this hub made itself: through the home of a routed connection, so that
    /// it comes after the answers to the requests forwarded before it.
    func reply(_ frame: OutboundFrame, to connection: ConnectionID, on server: any Outbound) {
        if let place, isLocal(connection), let route = connections[connection]?.route {
            place.relay.post(.echo(RelayedFrame(frame: frame.relayable, token: nil, supersedes: nil), to: connection), to: route.home)
        } else {
            server.send(frame, to: connection)
        }
    }

    /// A connection whose requests went to other hubs closed: each of them forgets it, and
    /// its session's home lets the participant go. True when it was in a session there.
    func forwardClose(_ connection: ConnectionID, _ state: ConnectionState, code: UInt16?, reason: String) -> Bool {
        guard let place, state.homes != 0 else { return false }
        for home in 0..<place.relay.routes where state.homes & (1 << UInt64(home)) != 0 {
            place.relay.post(.closed(connection, code: code, reason: reason), to: home)
        }
        return state.route != nil
    }

    /// At the home: tells a member's edge hub what its session is after a join, leave or
    /// replacement. The home keeps the connection's state (answers may still wait for the
    /// store) until the edge says it closed.
    func settled(_ connection: ConnectionID) {
        guard let place, !isLocal(connection) else { return }
        let session = connections[connection]?.sessionID
        place.relay.post(.membership(connection, session: session, from: place.hub), to: LocalRelay.hub(of: connection))
    }

    /// Takes and serves what the other hubs posted to this one. `local`: this hub's transport.
    ///
    /// A slice at a time: a home busy with forwarded requests (each of which may cost as much as
    /// one read from a socket) serves what it took for at most ``relaySlice``, then lets its
    /// transport write and read before it serves the rest. Served in one go, a large inbox
    /// would hold every write of the hub back (and its members' queues would grow past their
    /// limits, as if they read too slowly); a single thread interleaves reads and writes the same way.
    func takeRelayed(on local: any Outbound) {
        guard let place else { return }
        relayedBacklog.append(contentsOf: place.relay.take(for: place.hub))
        let out = outbound(for: local)
        let deadline = local.now + Self.relaySlice
        while let message = relayedBacklog.popFirst() {
            serveRelayed(message, place: place, out: out, local: local)
            guard !relayedBacklog.isEmpty, local.now >= deadline else { continue }
            if !relayedResumeQueued {
                relayedResumeQueued = true
                let thread = local.thread
                let bound = LoopBound((hub: self, local: local), on: thread)
                thread.enqueue {
                    let (hub, local) = bound.value
                    hub.relayedResumeQueued = false
                    hub.takeRelayed(on: local)
                }
            }
            return
        }
        // All served: let the slice's storage go.
        relayedBacklog = []
    }

    /// How long a hub serves relayed messages before its transport has a turn.
    static let relaySlice: Duration = .milliseconds(5)

    private func serveRelayed(_ message: RelayMessage, place: HubPlace, out: any Outbound, local: any Outbound) {
        switch message {
        case .request(let request, let connection, let peer, let grant):
            serveForwarded(request, from: connection, peer: peer, handshakeGrant: grant, place: place, on: out)
        case .http(let request, let responder):
            answer(request, responder: responder, on: local)
        case .gather(let gather):
            self.gather(gather, on: local)
        case .echo(let relayed, let connection):
            out.send(OutboundFrame(relayed: relayed.frame, ledger: local.sharedFrames), to: connection)
        case .closed(let connection, let code, let reason):
            closed(connection, code: code, reason: reason, on: local)
        case .frame(let relayed, let members, let skip):
            queue(relayed, for: members, except: skip, on: local)
        case .close(let connection, let code, let reason):
            local.close(connection, code: code, reason: reason)
        case .membership(let connection, let session, let home):
            membership(of: connection, is: session, from: home, place: place, on: local)
        case .evict(let session, let asker):
            let freed = unloadLongestIdle(on: local)
            place.relay.post(.evicted(for: session, freed: freed, by: place.hub), to: asker)
        case .evicted(let session, let freed, let hub):
            roomAnswer(for: session, freed: freed, from: hub)
        case .rerouted(let connection, let home):
            guard case .pending(_, let held)? = connections[connection]?.route else { return }
            connections[connection]?.route = .pending(home: home, held: held)
            connections[connection]?.homes |= 1 << UInt64(home)
        case .leaseLost(let session):
            leaseLost(session, on: out)
        }
    }

    private func serveForwarded(
        _ request: ClientRequest, from connection: ConnectionID, peer: String, handshakeGrant: AccessGrant?, place: HubPlace, on out: any Outbound
    ) {
        if connections[connection] == nil {
            guard case .join(let session, _, _) = request.body else {
                // The member left or was replaced while this was on its way.
                let frame = ServerMessage.error(ref: request.ref, code: .notJoined, message: "\(request.typeName) needs a joined session; send join first")
                return out.send(OutboundFrame(text: frame), to: connection)
            }
            let home = place.relay.home(of: session)
            if home != place.hub {
                // Sent here while the edge still took this hub for the connection's home.
                return reroute(request, from: connection, peer: peer, handshakeGrant: handshakeGrant, to: home, place: place)
            }
            connections[connection] = ConnectionState(peer: peer, handshakeGrant: handshakeGrant)
        }
        // The member's rate limit is kept here, with its session.
        if admit(request, from: connection, on: out) { handle(request, from: connection, on: out) }
    }

    /// In a cluster, whether `request` may go to another node, which then needs the client's
    /// text: a join (its session may be owned elsewhere), or a request of a connection routed to
    /// the gateway, waiting for a join's answer, or held behind a join waiting here for its
    /// session. The requests of a member of a session on this node never leave it.
    func mayLeaveNode(_ request: ClientRequest, from connection: ConnectionID) -> Bool {
        guard let gateway = place?.relay.gateway else { return false }
        if case .join = request.body { return true }
        if durability.joins.tickets[connection] != nil { return true }
        switch connections[connection]?.route {
        case .pending?: return true
        case .joined(let home)?: return home == gateway
        case nil: return false
        }
    }

    /// Sends a join served here on to `home`, its session's home after all (another node's
    /// session, found when it was loaded here), and tells the connection's edge, whose later
    /// requests then wait for that home's answer. `request` still carries the client's text.
    func reroute(_ request: ClientRequest, from connection: ConnectionID, peer: String, handshakeGrant: AccessGrant?, to home: Int, place: HubPlace) {
        if isLocal(connection) {
            connections[connection]?.route = .pending(home: home, held: [])
            connections[connection]?.homes |= 1 << UInt64(home)
        } else {
            // The edge's state stays there; this hub forgets the connection it made for the join.
            connections[connection] = nil
            if LocalRelay.hub(of: connection) != place.relay.gateway {
                place.relay.post(.rerouted(connection, to: home), to: LocalRelay.hub(of: connection))
            }
        }
        place.relay.post(.request(request, from: connection, peer: peer, handshakeGrant: handshakeGrant), to: home)
    }

    /// At an edge: a frame from a home hub, wrapped once (its bytes are not copied) and queued
    /// for the members here.
    private func queue(_ relayed: RelayedFrame, for members: [ConnectionID], except skip: ConnectionID?, on local: any Outbound) {
        let frame = OutboundFrame(relayed: relayed.frame, ledger: local.sharedFrames)
        let previous = relayed.supersedes.flatMap { relayedTransients.removeValue(forKey: $0) }
        if let token = relayed.token { relayedTransients[token] = frame }
        if members.count == 1, relayed.token == nil {
            if members[0] != skip { local.send(frame, to: members[0]) }
        } else {
            local.broadcast(frame, to: members, except: skip, superseding: previous, transient: relayed.token != nil)
        }
    }

    /// At an edge: forgets the relayed transient frames no queue holds any more. A later frame
    /// that supersedes one of them finds nothing to skip, which is right: it was all written.
    func forgetWrittenTransients() {
        guard !relayedTransients.isEmpty else { return }
        relayedTransients = relayedTransients.filter { $0.value.isQueued }
    }

    /// At an edge: the home's word on a connection's session. Requests held behind the join or
    /// leave go on, in order: to the home, or served here (a join elsewhere) when in none.
    private func membership(of connection: ConnectionID, is session: String?, from home: Int, place: HubPlace, on local: any Outbound) {
        guard let state = connections[connection] else { return }
        var held: [ClientRequest] = []
        switch (state.route, session) {
        case (.pending(let current, let waiting)?, _) where current == home:
            held = waiting
            connections[connection]?.route = session == nil ? nil : .joined(home: home)
        case (.joined(let current)?, nil) where current == home:
            connections[connection]?.route = nil
        case (_, let session?):
            connections[connection]?.route = .joined(home: place.relay.home(of: session))
        default:
            return
        }
        let out = outbound(for: local)
        for request in held where connections[connection] != nil {
            handle(request, from: connection, on: out)
        }
    }
}
