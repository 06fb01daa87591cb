import MeridianAuth
import MeridianProtocol
import MeridianTransport

/// The hub as the home of sessions whose members are connected to other hubs: it serves their
/// forwarded requests as its own (their frames and closes go back through ``RoutedOutbound``),
/// tells their edge what their session is, and sends a join on to the session's home when that
/// is another hub (or node) after all.
extension Hub {
    /// At the home: tells a member's edge hub what its session is after a join, leave or
    /// replacement. The home keeps the connection's state (answers may still wait for the
    /// store) until the edge says it closed.
    func settled(_ connection: ConnectionID) {
        guard let place, !isLocal(connection) else { return }
        let session = connections[connection]?.sessionID
        place.relay.post(.membership(connection, session: session, from: place.hub), to: LocalRelay.hub(of: connection))
    }

    func serveForwarded(
        _ request: ClientRequest, from connection: ConnectionID, peer: String, handshakeGrant: AccessGrant?, place: HubPlace, on out: any Outbound
    ) {
        let action = Home.forwarded(request, known: connections[connection] != nil) { session in
            let home = place.relay.home(of: session)
            return home == place.hub ? nil : home
        }
        switch action {
        case .serve:
            break
        case .adopt:
            adopt(connection, peer: peer, handshakeGrant: handshakeGrant)
        case .reroute(let home):
            return reroute(request, from: connection, peer: peer, handshakeGrant: handshakeGrant, to: home, place: place, on: out)
        case .refuse(let message):
            return out.send(OutboundFrame(text: ServerMessage.error(ref: request.ref, code: .notJoined, message: message)), to: connection)
        }
        // The member's rate limit is kept here, with its session.
        route(request, from: connection, on: out)
    }

    /// Sends a join served here on to `home`, its session's home after all (another node's
    /// session, found when it was loaded here), and tells the connection's edge, whose later
    /// requests then wait for that home's answer. `request` still carries the client's text.
    func reroute(_ request: ClientRequest, from connection: ConnectionID, peer: String, handshakeGrant: AccessGrant?, to home: Int, place: HubPlace, on out: any Outbound) {
        // An edge waits for that home's answer; a home forgets the connection it adopted for the
        // join, and tells its edge hub where to wait.
        update(connection, .sentOn(to: home), on: out)
        if !isLocal(connection), LocalRelay.hub(of: connection) != place.relay.gateway {
            place.relay.post(.rerouted(connection, to: home), to: LocalRelay.hub(of: connection))
        }
        place.relay.post(.request(request, from: connection, peer: peer, handshakeGrant: handshakeGrant), to: home)
    }
}
