import MeridianCore
import MeridianProtocol
import MeridianTransport

/// A transient request waiting for the connection's rate limit.
struct DeferredRequest {
    var key: String
    var request: ClientRequest
}

extension Hub {
    /// Whether `request` may be handled now. Over the connection's rate
    /// limit a transient request waits, replacing an older one of its kind
    /// (answered as conflated); any other request is refused with
    /// `rate_limited` and a retry hint. Waiting requests keep their order
    /// ahead of later ones.
    func admit(_ request: ClientRequest, from connection: ConnectionID, on server: any Outbound) -> Bool {
        releaseDeferred(connection, on: server)
        guard var state = connections[connection] else { return false }
        let limit = configuration.rateLimit
        var bucket = state.bucket ?? TokenBucket(limit, now: server.now)
        let allowed = state.deferred.isEmpty && bucket.take(limit, now: server.now)
        state.bucket = bucket
        // Stored before the refusal is counted: countProtocolError records it in the stored
        // state, which a later write of this copy would undo (and the abuse limit never trip).
        connections[connection] = state
        if allowed { return true }
        guard let key = Self.conflationKey(request) else {
            metrics.rateLimited(conflated: false)
            let frame = ServerMessage.error(
                ref: request.ref, code: .rateLimited,
                message: "\(request.typeName): over \(Int(limit.perSecond)) requests/s (burst \(limit.burst)); retry later",
                retryAfterMs: bucket.retryAfterMs(limit))
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
        if let index = state.deferred.firstIndex(where: { $0.key == key }) {
            let replaced = state.deferred.remove(at: index).request
            metrics.rateLimited(conflated: true)
            let seq = seq(of: state)
            server.send(OutboundFrame(text: ServerMessage.conflated(ref: replaced.ref, seq: seq)), to: connection)
        }
        state.deferred.append(DeferredRequest(key: key, request: request))
        connections[connection] = state
        deferredConnections.insert(connection)
        return false
    }

    /// Applies waiting transient requests as the bucket allows.
    func releaseDeferred(_ connection: ConnectionID, on server: any Outbound) {
        guard deferredConnections.contains(connection) else { return }
        while let state = connections[connection], let next = state.deferred.first {
            var bucket = state.bucket ?? TokenBucket(configuration.rateLimit, now: server.now)
            let allowed = bucket.take(configuration.rateLimit, now: server.now)
            connections[connection]?.bucket = bucket
            guard allowed else { return }
            connections[connection]?.deferred.removeFirst()
            handle(next.request, from: connection, on: server)
        }
        deferredConnections.remove(connection)
    }

    /// Called every tick.
    func releaseAllDeferred(on server: any Outbound) {
        for connection in deferredConnections { releaseDeferred(connection, on: server) }
    }

    /// What a transient request replaces when conflated; nil for requests that are never conflated.
    static func conflationKey(_ request: ClientRequest) -> String? {
        // A view that pans: the newest interest wins.
        if case .interest = request.body { return "interest" }
        guard case .command(let command) = request.body else { return nil }
        switch command {
        case .camera(.shared, .changing, _): return "camera.shared"
        case .camera(.own, .changing, _): return "camera.own"
        case .drag(let id, .dragging, _, _): return "drag:\(id)"
        case .location(.some): return "location"
        default: return nil
        }
    }
}
