import MeridianAuth
import MeridianProtocol
import MeridianTransport
import MeridianSync

/// The relay seam (Relay.swift) seen from a hub: what the other hubs post to it, taken a slice
/// at a time and dispatched to its edge side (Hub+Connection.swift: answers, frames and closes for
/// its own connections) or its home side (Hub+Home.swift: requests of members connected elsewhere).
/// A single hub (no place) does none of this.
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

    /// Takes and serves what the other hubs posted to this one. `local`: this hub's transport.
    ///
    /// A slice at a time: a home busy with forwarded requests (each of which may cost as much as
    /// one read from a socket) serves what it took for at most ``relaySlice``, then lets its
    /// transport write and read before it serves the rest. Served in one go, a large inbox
    /// would hold every write of the hub back (and its members' queues would grow past their
    /// limits, as if they read too slowly); a single thread interleaves reads and writes the same way.
    func takeRelayed(on local: any Outbound) {
        guard let place else { return }
        inbox.backlog.append(contentsOf: place.relay.take(for: place.hub))
        let out = outbound(for: local)
        let deadline = local.now + Self.relaySlice
        while let message = inbox.backlog.popFirst() {
            serveRelayed(message, place: place, out: out, local: local)
            guard !inbox.backlog.isEmpty, local.now >= deadline else { continue }
            if !inbox.resumeQueued {
                inbox.resumeQueued = true
                let thread = local.thread
                let bound = LoopBound((hub: self, local: local), on: thread)
                thread.enqueue {
                    let (hub, local) = bound.value
                    hub.inbox.resumeQueued = false
                    hub.takeRelayed(on: local)
                }
            }
            return
        }
        // All served: let the slice's storage go.
        inbox.backlog = []
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
            inbox.queue(relayed, for: members, except: skip, on: local)
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
            update(connection, .rerouted(to: home), on: out)
        case .leaseLost(let session):
            leaseLost(session, on: out)
        case .moved(let connection, let session, let reason):
            moveInPlace(connection, from: session, reason: reason, place: place, on: local)
        case .handedOver:
            // The gateway's alone.
            break
        }
    }
}
