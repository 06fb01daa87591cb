import Foundation
import MeridianAuth
import MeridianProtocol
import MeridianTransport

/// The hub carrying out what each connection's ``ConnectionState`` decides: requests served
/// here, sent on to their session's home hub, held, refused or waiting for the rate limit;
/// replies made here follow the home's answers; the home's word on a connection's session lets
/// what was held go on.
extension Hub {
    var connectionRules: ConnectionState.Rules {
        ConnectionState.Rules(rateLimit: configuration.rateLimit, maxProtocolErrors: configuration.maxProtocolErrors, abuseWindow: configuration.abuseWindow)
    }

    /// A WebSocket connection opened with `handshake` (its bearer token screened before).
    func open(_ connection: ConnectionID, handshake: Handshake) {
        connections[connection] = ConnectionState(peer: handshake.peer, handshakeGrant: gatekeeper.handshakeGrant(handshake))
        metrics.connectionEvent("opened")
        logger.debug("connection opened", metadata: ["connection": "\(connection)", "peer": "\(handshake.peer)"])
    }

    /// At a session's home: a member of another hub, whose first request (a join) came here.
    func adopt(_ connection: ConnectionID, peer: String, handshakeGrant: AccessGrant?) {
        connections[connection] = ConnectionState(peer: peer, handshakeGrant: handshakeGrant, isEdge: false)
    }

    /// `connection` is gone: its participant leaves its session.
    func closed(_ connection: ConnectionID, code: UInt16?, reason: String, on local: any Outbound) {
        guard let state = connections.removeValue(forKey: connection) else { return }
        overview.watchers.remove(connection)
        deferredConnections.remove(connection)
        logger.debug("connection closed", metadata: [
            "connection": "\(connection)", "code": "\(code.map(String.init) ?? "none")", "reason": "\(reason)",
        ])
        if isLocal(connection) { metrics.connectionEvent("closed") }
        if forwardClose(connection, state, code: code, reason: reason) { return }
        leave(connection, state, reason: code == CloseCode.slowConsumer ? "slow_consumer" : "disconnected", on: outbound(for: local))
    }

    /// What happened to `connection` besides a request: its state changes, and the hub carries
    /// out what follows.
    func update(_ connection: ConnectionID, _ event: ConnectionState.Event, on server: any Outbound) {
        guard connections.index(forKey: connection) != nil else { return }
        carryOut(connections[connection]!.receive(event), for: connection, on: server)
    }

    /// A request from `connection`: where its state says.
    func route(_ request: ClientRequest, from connection: ConnectionID, on server: any Outbound) {
        guard connections.index(forKey: connection) != nil else { return }
        let actions = connections[connection]!.receive(request, at: server.now, rules: connectionRules) { sessionHome($0, for: connection) }
        carryOut(actions, for: connection, on: server)
    }

    /// `connection` sent what was refused: one that keeps doing so is closed.
    func countProtocolError(_ connection: ConnectionID, on server: any Outbound) {
        guard connections.index(forKey: connection) != nil else { return }
        carryOut(connections[connection]!.erred(at: server.now, rules: connectionRules), for: connection, on: server)
    }

    /// Serves the waiting transient requests the rate limit lets through now (every tick).
    func releaseAllDeferred(on server: any Outbound) {
        for connection in deferredConnections {
            guard connections.index(forKey: connection) != nil else {
                deferredConnections.remove(connection)
                continue
            }
            let actions = connections[connection]!.release(at: server.now, rules: connectionRules)
            if connections[connection]?.isWaitingForTokens != true { deferredConnections.remove(connection) }
            carryOut(actions, for: connection, on: server)
        }
    }

    private func carryOut(_ actions: [ConnectionState.Action], for connection: ConnectionID, on server: any Outbound) {
        for action in actions where connections[connection] != nil {
            switch action {
            case .serve(let request):
                handle(request, from: connection, on: server)
            case .forward(let request, let home):
                guard let place, let state = connections[connection] else { return }
                place.relay.post(.request(request, from: connection, peer: state.peer, handshakeGrant: state.handshakeGrant), to: home)
            case .refuse(let ref, _, let code, let message, let retryAfterMs):
                if code == .rateLimited {
                    metrics.rateLimited(conflated: false)
                } else {
                    metrics.error(code)
                }
                reply(OutboundFrame(text: ServerMessage.error(ref: ref, code: code, message: message, retryAfterMs: retryAfterMs)), to: connection, on: server)
            case .conflate(let ref):
                metrics.rateLimited(conflated: true)
                let seq = seq(of: connections[connection]!)
                server.send(OutboundFrame(text: ServerMessage.conflated(ref: ref, seq: seq)), to: connection)
            case .waitForTokens:
                deferredConnections.insert(connection)
            case .settle:
                settled(connection)
            case .close(let code, let reason):
                logger.warning("closing connection", metadata: ["connection": "\(connection)", "reason": "\(reason)"])
                server.close(connection, code: code, reason: reason)
            case .resume(let held):
                for request in held where connections[connection] != nil {
                    route(request, from: connection, on: server)
                }
            case .forget:
                connections[connection] = nil
            }
        }
    }

    /// The hub of `session`'s home as `connection`'s edge sees it: nil for this hub, and for
    /// every session when the connection is another hub's (this hub is its home, not its edge).
    func sessionHome(_ session: String, for connection: ConnectionID) -> Int? {
        guard let place, isLocal(connection) else { return nil }
        let home = place.relay.home(of: session)
        return home == place.hub ? nil : home
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

    /// In a cluster, whether `request` may go to another node, which then needs the client's text.
    func mayLeaveNode(_ request: ClientRequest, from connection: ConnectionID) -> Bool {
        guard let gateway = place?.relay.gateway else { return false }
        return connections[connection]?.mayLeaveNode(request, gateway: gateway) ?? false
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
        update(connection, .answered(by: home, membership), on: outbound(for: local))
    }

    /// At an edge: the session of a member served by another node moved. A member whose join asked
    /// for handover stays connected: it is told (`moved`, with its join's ref), its routes to the
    /// nodes that served it are dropped, and its join goes again, as it came, to wherever the
    /// session is now; requests it sends meanwhile wait behind that join. Any other member, or one
    /// with a join or leave still unanswered, is closed with 4012 and joins again itself.
    func moveInPlace(_ connection: ConnectionID, from session: String, reason: String, place: HubPlace, on local: any Outbound) {
        guard connections[connection] != nil else { return }
        guard let gateway = place.relay.gateway, let rejoin = connections[connection]!.handedOver(through: gateway) else {
            return local.close(connection, code: CloseCode.sessionMoved, reason: reason)
        }
        place.relay.post(.handedOver(connection, session: session), to: gateway)
        metrics.count("meridian_cluster_handovers_total")
        local.send(OutboundFrame(text: ServerMessage.moved(ref: rejoin.ref, session: session, reason: reason)), to: connection)
        route(rejoin, from: connection, on: outbound(for: local))
    }

    /// Closes, with 4401, connections whose token expired unrefreshed (looked at once a second).
    func closeExpiredTokens(on server: any Outbound) {
        for (id, grant) in gatekeeper.expired(among: connections, at: server.date) {
            logger.info("token expired", metadata: ["connection": "\(id)", "participant": "\(grant.participant)"])
            update(id, .grantExpired, on: server)
            server.close(id, code: CloseCode.tokenExpired, reason: "token expired")
        }
    }
}
