import MeridianProtocol

/// What the home hub of a session does with a request an edge sent on to it, decided with no
/// I/O, as ``Edge`` decides at the edge: the hub does what ``forwarded(_:known:home:)`` says.
enum Home {
    enum Action: Equatable {
        /// Served here, as the hub's own connection's (a member it knows; its rate limit and its
        /// wait behind a loading session are kept here, with its session).
        case serve
        /// A new member's join: the hub makes the connection's state here, then serves it.
        case adopt
        /// A join of a session whose home is hub `home`: the edge took this hub for it (the
        /// session's home changed on the way, or it is another node's); the join goes on there.
        case reroute(to: Int)
        /// Refused with `not_joined`: the member left or was replaced while this was on its way.
        case refuse(String)
    }

    /// `known`: the hub holds the connection's state; `home`: the hub of a session's home when
    /// it is not this one (nil: this hub).
    static func forwarded(_ request: ClientRequest, known: Bool, home: (String) -> Int?) -> Action {
        if known { return .serve }
        guard case .join(let session, _, _) = request.body else {
            return .refuse("\(request.typeName) needs a joined session; send join first")
        }
        if let elsewhere = home(session) { return .reroute(to: elsewhere) }
        return .adopt
    }
}
