import Foundation
import MeridianTransport
import Synchronization

/// A home hub's outbound: frames for its own connections go to its transport; frames for
/// members on other hubs go through the relay, once per hub, whatever the number of members
/// there. Transient frames carry a token so that the edge can tell which earlier frame a newer
/// one supersedes.
final class RoutedOutbound: Outbound {
    let local: any Outbound
    let relay: any Relay
    let hub: Int
    /// Tokens of transient frames, from this hub (the high byte).
    private let tokens: TokenCounter

    init(local: any Outbound, relay: any Relay, hub: Int) {
        self.local = local
        self.relay = relay
        self.hub = hub
        self.tokens = TokenCounter(hub: hub)
    }

    var now: Duration { local.now }
    var date: Date { local.date }
    var sharedFrames: SharedFrameLedger { local.sharedFrames }
    var transportStats: TransportStats { local.transportStats }

    var thread: any HubThread { local.thread }

    func send(_ frame: OutboundFrame, to connection: ConnectionID) {
        let target = LocalRelay.hub(of: connection)
        if target == hub { return local.send(frame, to: connection) }
        relay.post(.frame(RelayedFrame(frame: frame.relayable, token: nil, supersedes: nil), to: [connection], except: nil), to: target)
    }

    func broadcast(_ frame: OutboundFrame, to members: [ConnectionID], except skip: ConnectionID?, superseding previous: OutboundFrame?, transient: Bool) {
        // Members are split by hub only once one of another hub turns up: a session whose
        // members are all here costs one pass over the ids and no copy.
        guard let firstRemote = members.firstIndex(where: { LocalRelay.hub(of: $0) != hub }) else {
            return local.broadcast(frame, to: members, except: skip, superseding: previous, transient: transient)
        }
        var own = Array(members[..<firstRemote])
        var remote: [[ConnectionID]] = Array(repeating: [], count: relay.routes)
        for member in members[firstRemote...] {
            let target = LocalRelay.hub(of: member)
            if target == hub { own.append(member) } else { remote[target].append(member) }
        }
        local.broadcast(frame, to: own, except: skip, superseding: previous, transient: transient)
        let supersedes = previous.map { tokens.token(of: $0) }
        let token = transient ? tokens.token(of: frame) : nil
        for (target, ids) in remote.enumerated() where !ids.isEmpty {
            relay.post(.frame(RelayedFrame(frame: frame.relayable, token: token, supersedes: supersedes), to: ids, except: skip), to: target)
        }
    }

    func close(_ connection: ConnectionID, code: UInt16, reason: String) {
        let target = LocalRelay.hub(of: connection)
        if target == hub { return local.close(connection, code: code, reason: reason) }
        relay.post(.close(connection, code: code, reason: reason), to: target)
    }
}

/// Hands out relay tokens, stored on the frames themselves (only this hub's thread reads them).
private final class TokenCounter: Sendable {
    private let next: Atomic<UInt64>

    /// Tokens are laid out as connection ids are: the hub in the high byte, so that no two hubs' meet.
    init(hub: Int) { next = Atomic(ConnectionID(tag: UInt8(truncatingIfNeeded: hub), serial: 1).rawValue) }

    func token(of frame: OutboundFrame) -> UInt64 {
        if let token = frame.relayToken { return token }
        let token = next.wrappingAdd(1, ordering: .relaxed).oldValue
        frame.relayToken = token
        return token
    }
}
