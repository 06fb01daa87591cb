import MeridianSync

/// Counts the WebSocket connections admitted (upgrade accepted, open or still completing the
/// handshake) in total and per peer IP, for the connection limits. Plain value, no I/O.
struct Admissions {
    /// Why an upgrade is refused by the limits.
    enum Refusal: Equatable {
        /// `maxConnections` reached: HTTP 503.
        case serverFull
        /// `maxConnectionsPerIP` reached for this peer: HTTP 429.
        case peerFull
    }

    let maxTotal: Int
    let maxPerPeer: Int
    private(set) var total = 0
    private(set) var perPeer: [String: Int] = [:]

    init(maxTotal: Int, maxPerPeer: Int) {
        self.maxTotal = maxTotal
        self.maxPerPeer = maxPerPeer
    }

    /// The refusal a new connection from `peer` would get now, or nil if it fits.
    func check(_ peer: String) -> Refusal? {
        if total >= maxTotal { return .serverFull }
        if perPeer[peer, default: 0] >= maxPerPeer { return .peerFull }
        return nil
    }

    mutating func admit(_ peer: String) {
        total += 1
        perPeer[peer, default: 0] += 1
    }

    /// Undoes one ``admit(_:)``; call exactly once per admitted connection.
    mutating func release(_ peer: String) {
        total -= 1
        let left = perPeer[peer, default: 1] - 1
        perPeer[peer] = left > 0 ? left : nil
    }
}

/// The connection limits of one server, shared by its service threads' transports
/// (``TransportConfiguration/connectionLimits``): counted under a lock.
public final class ConnectionLimits: Sendable {
    private let admissions: Locked<Admissions>

    public init(maxTotal: Int, maxPerPeer: Int) {
        admissions = Locked(Admissions(maxTotal: maxTotal, maxPerPeer: maxPerPeer))
    }

    /// The refusal a new connection from `peer` would get now, or nil if it fits.
    func check(_ peer: String) -> Admissions.Refusal? { admissions.withLock { $0.check(peer) } }

    /// Counts a connection from `peer` unless the limits are reached meanwhile.
    func admit(_ peer: String) -> Admissions.Refusal? {
        admissions.withLock { admissions in
            if let refusal = admissions.check(peer) { return refusal }
            admissions.admit(peer)
            return nil
        }
    }

    func release(_ peer: String) { admissions.withLock { $0.release(peer) } }

    var total: Int { admissions.withLock { $0.total } }
}
