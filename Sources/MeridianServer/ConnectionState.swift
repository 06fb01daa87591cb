import MeridianAuth
import MeridianCore
import MeridianProtocol

/// One WebSocket connection as a hub keeps it, and every decision about it, with no I/O and
/// the clock passed in: where each request goes (``Edge``), whether the rate limit lets it
/// through (``RateGate``), when the connection has erred too often, who it is in a session, and
/// the join it repeats when its session moves. The hub carries out the ``Action``s its methods
/// return and changes it only through them.
///
/// A hub keeps the state of its own connections (`isEdge`: it is their edge) and of the members
/// of its sessions connected to other hubs (it is their home, and adopted them with their join).
struct ConnectionState {
    /// What a connection's requests are held to.
    struct Rules: Equatable {
        var rateLimit: RateLimit
        /// Refusals tolerated within ``abuseWindow`` before the connection is closed with 4009.
        var maxProtocolErrors: Int
        var abuseWindow: Duration

        init(rateLimit: RateLimit = RateLimit(), maxProtocolErrors: Int = 100, abuseWindow: Duration = .seconds(10)) {
            self.rateLimit = rateLimit
            self.maxProtocolErrors = maxProtocolErrors
            self.abuseWindow = abuseWindow
        }
    }

    /// Who the connection is in a session of this hub.
    struct Member: Equatable {
        var session: String
        var participant: ParticipantID
        /// The verified token the participant joined with (nil without authentication).
        var grant: AccessGrant?
    }

    /// What the hub does for the connection.
    enum Action: Equatable {
        /// Serve the request here: its session's rules answer it.
        case serve(ClientRequest)
        /// Send it on to hub `home`, its session's home, which keeps the connection's state too.
        case forward(ClientRequest, to: Int)
        /// Answer the request with an error (`retryAfterMs`: when a token comes, for
        /// `rate_limited`).
        case refuse(RequestRef, request: String, SessionError.Code, String, retryAfterMs: Int? = nil)
        /// Answer the request as conflated: a newer one of its kind replaced it while it waited.
        case conflate(RequestRef)
        /// Requests wait for the rate limit: ask ``release(at:rules:)`` on each tick.
        case waitForTokens
        /// A join or leave is answered (refused): its edge hears where the connection is.
        case settle
        /// Close the connection.
        case close(code: UInt16, reason: String)
        /// Receive these held requests again, in order.
        case resume([ClientRequest])
        /// Forget the connection: its edge, another hub, keeps its state.
        case forget
    }

    let peer: String
    /// The grant of the WebSocket handshake's bearer token, used by a join without its own.
    let handshakeGrant: AccessGrant?
    /// The hub is the connection's edge (its socket is here), not only its session's home.
    let isEdge: Bool
    private(set) var member: Member?
    /// Where the connection's requests go: served here, sent on to its session's home hub, or
    /// held behind a join or leave not answered yet.
    private(set) var edge = Edge()
    /// The hubs its requests went to (bit per hub), which keep its state until it closes.
    private(set) var homes: UInt64 = 0
    /// The connection's last join, when it asked for handover: sent again, as it is, when the
    /// session moves to another node of a cluster.
    private(set) var rejoin: ClientRequest?
    /// The join waiting here for its session to load (each wait has its own ticket): the load
    /// that ends answers it only while this is its ticket.
    private(set) var loadTicket: UInt64?
    private var rate = RateGate()
    /// Times of recent protocol errors, for the abuse limit.
    private var recentErrors: [Duration] = []

    init(peer: String, handshakeGrant: AccessGrant?, isEdge: Bool = true) {
        self.peer = peer
        self.handshakeGrant = handshakeGrant
        self.isEdge = isEdge
    }

    var sessionID: String? { member?.session }
    var participant: ParticipantID? { member?.participant }
    var grant: AccessGrant? { member?.grant }
    /// Transient requests wait for the rate limit.
    var isWaitingForTokens: Bool { !rate.waiting.isEmpty }

    // MARK: Requests

    /// A request from the client, at its edge, or sent on by its edge to this hub, its home (where
    /// it does not go through the edge again: it is served, or held while its join waits for the
    /// session to load). `home` names the hub of a session's home when it is not this one (nil:
    /// this hub).
    mutating func receive(_ request: ClientRequest, at now: Duration, rules: Rules, home: (String) -> Int?) -> [Action] {
        guard isEdge else {
            switch edge.route {
            case .awaiting: return hold(request)
            case .here, .joined: return admit(request, at: now, rules: rules)
            }
        }
        if case .join(_, let parameters, _) = request.body { rejoin = parameters.handover ? request : nil }
        switch edge.receive(request, inSession: member != nil, home: home) {
        case .serve:
            return admit(request, at: now, rules: rules)
        case .forward(let home):
            homes |= 1 << UInt64(home)
            return [.forward(request, to: home)]
        case .hold:
            return []
        case .refuse(let message):
            return [.refuse(request.ref, request: request.typeName, .notJoined, message)]
        }
    }

    private mutating func hold(_ request: ClientRequest) -> [Action] {
        switch edge.receive(request, home: { _ in nil }) {
        case .refuse(let message): [.refuse(request.ref, request: request.typeName, .notJoined, message)]
        case .serve, .forward, .hold: []
        }
    }

    /// The waiting transient requests the rate limit lets through now, in order.
    mutating func release(at now: Duration, rules: Rules) -> [Action] {
        rate.release(limit: rules.rateLimit, at: now).map { .serve($0) }
    }

    /// Serves `request` when the rate limit lets it through (after the requests waiting before
    /// it); over the limit, a transient request waits (replacing one of its kind, answered as
    /// conflated) and any other is refused with a retry hint, which counts as an error.
    private mutating func admit(_ request: ClientRequest, at now: Duration, rules: Rules) -> [Action] {
        var actions = release(at: now, rules: rules)
        switch rate.admit(request, limit: rules.rateLimit, at: now) {
        case .now:
            actions.append(.serve(request))
        case .waits(let replaced):
            if let replaced { actions.append(.conflate(replaced.ref)) }
            actions.append(.waitForTokens)
        case .refused(let retryAfterMs):
            let limit = rules.rateLimit
            actions.append(.refuse(
                request.ref, request: request.typeName, .rateLimited,
                "\(request.typeName): over \(Int(limit.perSecond)) requests/s (burst \(limit.burst)); retry later", retryAfterMs: retryAfterMs))
            // A member's edge holds its requests behind a join or leave until the home says
            // where the connection is: a refused one is answered that way too.
            switch request.body {
            case .join, .leave: actions.append(.settle)
            default: break
            }
            actions += erred(at: now, rules: rules)
        }
        return actions
    }

    /// The client sent what could not be decoded or was refused: one that keeps doing so is
    /// closed with 4009.
    mutating func erred(at now: Duration, rules: Rules) -> [Action] {
        recentErrors.removeAll { now - $0 > rules.abuseWindow }
        recentErrors.append(now)
        guard recentErrors.count > rules.maxProtocolErrors else { return [] }
        return [.close(code: CloseCode.abusive, reason: "too many invalid requests")]
    }

    // MARK: Events

    /// What happens to the connection besides its requests: its session's rules and answers,
    /// its token, and the loads and hubs its join waits for.
    enum Event: Equatable {
        /// Joined a session of this hub.
        case joined(Member)
        /// Left its session here (a leave, a replacement, the session gone from this node).
        case left
        /// `token.refresh`: the new token's grant replaces the joined one's.
        case refreshed(AccessGrant)
        /// The joined token expired (the connection is being closed).
        case grantExpired
        /// The join waits here for its session to load, with `ticket`: later requests are held.
        case waitingForLoad(ticket: UInt64)
        /// The load behind `ticket` is done (the join is tried again; see ``loadTicket``).
        case loaded(ticket: UInt64)
        /// The join that waited for a load is answered: unless it waits again, or went on to
        /// another node's session, the requests held behind it go on.
        case loadAnswered
        /// A join served here went on to hub `home`, its session's home after all: an edge waits
        /// for that home's answer, which keeps the connection's state too; a home that adopted
        /// the connection for the join forgets it.
        case sentOn(to: Int)
        /// The home a join was forwarded to sent it on to hub `home`: an edge still waiting for
        /// the answer waits for that home's instead.
        case rerouted(to: Int)
        /// Hub `home`'s word on the connection's session after a join, leave or replacement: the
        /// requests held behind it go on.
        case answered(by: Int, Edge.Membership)
    }

    /// Changes the state as `event` says: the actions it leads to (``Action/resume(_:)``,
    /// ``Action/forget``).
    mutating func receive(_ event: Event) -> [Action] {
        switch event {
        case .joined(let member):
            self.member = member
        case .left:
            member = nil
        case .refreshed(let grant):
            member?.grant = grant
        case .grantExpired:
            member?.grant = nil
        case .waitingForLoad(let ticket):
            loadTicket = ticket
            edge.wait(for: nil)
        case .loaded(let ticket):
            if loadTicket == ticket { loadTicket = nil }
        case .loadAnswered:
            guard loadTicket == nil, edge.route == .awaiting(home: nil) else { return [] }
            return resume(edge.answered(by: nil, member == nil ? .none : .here))
        case .sentOn(let home):
            guard isEdge else { return [.forget] }
            wait(for: home)
        case .rerouted(let home):
            guard case .awaiting = edge.route else { return [] }
            wait(for: home)
        case .answered(let home, let membership):
            return resume(edge.answered(by: home, membership))
        }
        return []
    }

    private mutating func wait(for home: Int) {
        edge.wait(for: home)
        homes |= 1 << UInt64(home)
    }

    private func resume(_ held: [ClientRequest]) -> [Action] {
        held.isEmpty ? [] : [.resume(held)]
    }

    /// The session of a member served through `gateway` moved to another node: the join to send
    /// again, as it came, for a member that asked for handover (its route is dropped); nil for
    /// any other, which is closed and joins again itself.
    mutating func handedOver(through gateway: Int) -> ClientRequest? {
        guard let rejoin, edge.route == .joined(home: gateway) else { return nil }
        _ = edge.answered(by: gateway, .none)
        return rejoin
    }

    /// In a cluster (`gateway`: the relay's hub to other nodes), whether `request` may go to
    /// another node, which then needs the client's text: a join (its session may be owned
    /// elsewhere), or a request of a connection routed to the gateway, waiting for a join's
    /// answer, or held behind a join waiting here for its session. The requests of a member of a
    /// session on this node never leave it.
    func mayLeaveNode(_ request: ClientRequest, gateway: Int) -> Bool {
        if case .join = request.body { return true }
        switch edge.route {
        case .awaiting: return true
        case .joined(let home): return home == gateway
        case .here: return false
        }
    }
}
