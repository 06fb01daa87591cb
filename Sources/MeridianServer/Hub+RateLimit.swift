import MeridianCore
import MeridianProtocol
import MeridianTransport

extension Hub {
    /// Whether `request` may be handled now, as the connection's ``RateGate`` says: over the
    /// limit, a transient request waits (the one of its kind it replaces is answered as
    /// conflated); any other request is refused with `rate_limited` and a retry hint.
    func admit(_ request: ClientRequest, from connection: ConnectionID, on server: any Outbound) -> Bool {
        releaseDeferred(connection, on: server)
        guard connections.index(forKey: connection) != nil else { return false }
        let limit = configuration.rateLimit
        switch connections[connection]!.rate.admit(request, limit: limit, at: server.now) {
        case .now:
            return true
        case .waits(let replaced):
            if let replaced {
                metrics.rateLimited(conflated: true)
                let seq = seq(of: connections[connection]!)
                server.send(OutboundFrame(text: ServerMessage.conflated(ref: replaced.ref, seq: seq)), to: connection)
            }
            deferredConnections.insert(connection)
            return false
        case .refused(let retryAfterMs):
            metrics.rateLimited(conflated: false)
            let frame = ServerMessage.error(
                ref: request.ref, code: .rateLimited,
                message: "\(request.typeName): over \(Int(limit.perSecond)) requests/s (burst \(limit.burst)); retry later",
                retryAfterMs: retryAfterMs)
            server.send(OutboundFrame(text: frame), to: connection)
            // A member's edge holds its requests behind a join or leave until the home says
            // where the connection is: a refused one is answered that way too.
            switch request.body {
            case .join, .leave: settled(connection)
            default: break
            }
            countProtocolError(connection, on: server)
            return false
        }
    }

    /// Handles the waiting transient requests the bucket lets through now.
    func releaseDeferred(_ connection: ConnectionID, on server: any Outbound) {
        guard deferredConnections.contains(connection) else { return }
        guard connections[connection] != nil else {
            deferredConnections.remove(connection)
            return
        }
        let released = connections[connection]!.rate.release(limit: configuration.rateLimit, at: server.now)
        if connections[connection]!.rate.waiting.isEmpty { deferredConnections.remove(connection) }
        for request in released where connections[connection] != nil {
            handle(request, from: connection, on: server)
        }
    }

    /// Called every tick.
    func releaseAllDeferred(on server: any Outbound) {
        for connection in deferredConnections { releaseDeferred(connection, on: server) }
    }
}
