import MeridianAuth
import MeridianProtocol
import MeridianTransport

/// The hub as the edge of its own connections: each request goes where the connection's
/// ``Edge`` says (served here, sent on to its session's home hub, held, refused), replies made
/// here follow the home's answers, and the home's word on a connection's session lets what was
/// held go on.
extension Hub {
    /// The hub of `session`'s home as `connection`'s edge sees it: nil for this hub, and for
    /// every session when the connection is another hub's (this hub is its home, not its edge).
    func sessionHome(_ session: String, for connection: ConnectionID) -> Int? {
        guard let place, isLocal(connection) else { return nil }
        let home = place.relay.home(of: session)
        return home == place.hub ? nil : home
    }

    /// Sends `request` on to hub `home`, which keeps the connection's state from now on too.
    func forward(_ request: ClientRequest, from connection: ConnectionID, to home: Int) {
        guard let place, let state = connections[connection] else { return }
        connections[connection]?.homes |= 1 << UInt64(home)
        place.relay.post(.request(request, from: connection, peer: state.peer, handshakeGrant: state.handshakeGrant), to: home)
    }

    /// Sends a reply this hub made itself: through the home of a routed connection, so that
    /// it comes after the answers to the requests forwarded before it.
    func reply(_ frame: OutboundFrame, to connection: ConnectionID, on server: any Outbound) {
        if let place, isLocal(connection), let home = connections[connection]?.edge.replyHome {
            place.relay.post(.echo(RelayedFrame(frame: frame.relayable, token: nil, supersedes: nil), to: connection), to: home)
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
        return state.edge.replyHome != nil
    }

    /// In a cluster, whether `request` may go to another node, which then needs the client's
    /// text: a join (its session may be owned elsewhere), or a request of a connection routed to
    /// the gateway, waiting for a join's answer, or held behind a join waiting here for its
    /// session. The requests of a member of a session on this node never leave it.
    func mayLeaveNode(_ request: ClientRequest, from connection: ConnectionID) -> Bool {
        guard let gateway = place?.relay.gateway else { return false }
        if case .join = request.body { return true }
        switch connections[connection]?.edge.route {
        case .awaiting?: return true
        case .joined(let home)?: return home == gateway
        case .here?, nil: return false
        }
    }

    /// At an edge: the home's word on a connection's session. Requests held behind the join or
    /// leave go on, in order: to the home, or served here (a join elsewhere) when in none.
    func membership(of connection: ConnectionID, is session: String?, from home: Int, place: HubPlace, on local: any Outbound) {
        guard connections[connection] != nil else { return }
        let membership: Edge.Membership
        switch session.map(place.relay.home(of:)) {
        case nil: membership = .none
        case place.hub?: membership = .here
        case let sessionHome?: membership = .at(home: sessionHome)
        }
        let held = connections[connection]!.edge.answered(by: home, membership)
        let out = outbound(for: local)
        for request in held where connections[connection] != nil {
            route(request, from: connection, on: out)
        }
    }

    /// At an edge: the session of a member served by another node moved. A member whose join asked
    /// for handover stays connected: it is told (`moved`, with its join's ref), its routes to the
    /// nodes that served it are dropped, and its join goes again, as it came, to wherever the
    /// session is now; requests it sends meanwhile wait behind that join. Any other member, or one
    /// with a join or leave still unanswered, is closed with 4012 and joins again itself.
    func moveInPlace(_ connection: ConnectionID, from session: String, reason: String, place: HubPlace, on local: any Outbound) {
        guard let state = connections[connection] else { return }
        guard let rejoin = state.rejoin, let gateway = place.relay.gateway, state.edge.route == .joined(home: gateway) else {
            return local.close(connection, code: CloseCode.sessionMoved, reason: reason)
        }
        place.relay.post(.handedOver(connection, session: session), to: gateway)
        _ = connections[connection]!.edge.answered(by: gateway, .none)
        metrics.count("meridian_cluster_handovers_total")
        metrics.messageOut("moved")
        local.send(OutboundFrame(text: ServerMessage.moved(ref: rejoin.ref, session: session, reason: reason)), to: connection)
        route(rejoin, from: connection, on: outbound(for: local))
    }

    /// Does what the connection's edge says with `request`: serves it (once the rate limit
    /// admits it), sends it on to its session's home hub (which admits it), holds it behind the
    /// answer the connection waits for, or refuses it when too many are held.
    func route(_ request: ClientRequest, from connection: ConnectionID, on server: any Outbound) {
        guard let index = connections.index(forKey: connection) else { return }
        let inSession = connections.values[index].sessionID != nil
        if case .join(_, let parameters, _) = request.body, isLocal(connection) {
            connections[connection]!.rejoin = parameters.handover ? request : nil
        }
        let action = connections[connection]!.edge.receive(request, inSession: inSession) { sessionHome($0, for: connection) }
        switch action {
        case .serve:
            if admit(request, from: connection, on: server) { handle(request, from: connection, on: server) }
        case .forward(let home):
            forward(request, from: connection, to: home)
        case .hold:
            break
        case .refuse(let message):
            metrics.error(.notJoined)
            metrics.messageOut("error")
            reply(OutboundFrame(text: ServerMessage.error(ref: request.ref, code: .notJoined, message: message)), to: connection, on: server)
        }
    }
}
