import MeridianAPI
import MeridianProtocol

/// Where one connection's requests go, decided at the hub it is connected to (its edge): served
/// there, forwarded to the hub that is its session's home, or held, in order, behind a join or
/// leave whose answer has not come. A value with no I/O: the hub does what ``receive(_:home:)``
/// says, and tells it of each answer (``wait(for:)``, ``answered(by:session:)``).
///
/// A connection waits behind at most one answer at a time, whoever gives it: the home hub of a
/// forwarded join or leave, or this hub while the join's session loads.
struct Edge {
    enum Route: Equatable {
        /// In no session, or in one of this hub: requests are served here.
        case here
        /// A join or leave is not answered yet, by hub `home` (nil: this hub, the join waiting
        /// for its session to load): later requests are held until it is.
        case awaiting(home: Int?)
        /// In a session of hub `home`: requests go there.
        case joined(home: Int)
    }

    /// What the hub does with a request.
    enum Action: Equatable {
        /// Served here.
        case serve
        /// Sent on to hub `home`.
        case forward(to: Int)
        /// Kept, in order, until the answer the connection waits for comes.
        case hold
        /// Refused with `not_joined`: ``limit`` requests are held already.
        case refuse(String)
    }

    /// Most requests held behind one answer; more are refused.
    static let limit = 1_024

    private(set) var route: Route = .here
    /// The requests held behind the answer, oldest first.
    private(set) var held: [ClientRequest] = []

    /// The hub a reply made here goes through, so that it comes after the answers to the
    /// requests forwarded before it: the home of the connection's route, nil for none.
    var replyHome: Int? {
        switch route {
        case .here, .awaiting(home: nil): nil
        case .awaiting(let home?): home
        case .joined(let home): home
        }
    }

    /// What to do with `request`. `home` names the hub of a session's home when it is not this
    /// one (nil: this hub; a hub that only serves others' members passes `{ _ in nil }`);
    /// `inSession`: the connection is in a session of this hub (a join is then served here, and
    /// refused there).
    mutating func receive(_ request: ClientRequest, inSession: Bool = false, home: (String) -> Int?) -> Action {
        switch route {
        case .awaiting(let waitingFor):
            guard held.count < Self.limit else {
                let what = waitingFor == nil ? "the join is still waiting for its session" : "the join or leave before it is still waiting for its answer"
                return .refuse("\(request.typeName): \(what), with \(held.count) requests behind it")
            }
            held.append(request)
            return .hold
        case .joined(let home):
            // A dashboard's watch is this hub's own (its reply still goes through the home).
            if case .overviewWatch = request.body { return .serve }
            if case .leave = request.body { route = .awaiting(home: home) }
            return .forward(to: home)
        case .here:
            guard !inSession, case .join(let session, _, _) = request.body, SessionID.isValid(session), let home = home(session) else { return .serve }
            route = .awaiting(home: home)
            return .forward(to: home)
        }
    }

    /// The connection now waits for an answer from `home` (nil: this hub, its join behind a
    /// load; or another hub, a join sent on there): what it holds stays held.
    mutating func wait(for home: Int?) {
        route = .awaiting(home: home)
    }

    /// Where an answer says the connection is.
    enum Membership: Equatable {
        /// In no session.
        case none
        /// In a session of this hub.
        case here
        /// In a session of hub `home`.
        case at(home: Int)
    }

    /// `home`'s answer (nil: this hub's) to what the connection waits for. Returns the held
    /// requests, to go through ``receive(_:home:)`` again in order; none if the connection
    /// waits for another hub's answer.
    mutating func answered(by home: Int?, _ membership: Membership) -> [ClientRequest] {
        switch (route, membership) {
        case (.awaiting(let waitingFor), _) where waitingFor == home:
            // A session of the hub that answered is reached through it.
            route = membership == .none ? .here : home.map { .joined(home: $0) } ?? .here
        case (.joined(let current), .none) where current == home:
            // A member served there left or was replaced.
            route = .here
            return []
        case (_, .here), (_, .at):
            // In a session (of the hub that served a join sent on to it, or a replacement's):
            // what was held goes on.
            route = Self.route(membership)
        default:
            return []
        }
        defer { held = [] }
        return held
    }

    private static func route(_ membership: Membership) -> Route {
        switch membership {
        case .none, .here: .here
        case .at(let home): .joined(home: home)
        }
    }
}
