import MeridianProtocol
import Testing

@testable import MeridianServer

/// The rules of a connection's edge, without a hub or a socket: where each request goes, what
/// waits behind a join or leave, and what an answer lets go on; and what the home does with a
/// request an edge sent on.
@Suite("Edge")
struct EdgeTests {
    /// Sessions whose name starts with "far" live on hub 2; the others on this hub.
    static func home(_ session: String) -> Int? { session.hasPrefix("far") ? 2 : nil }

    static func request(_ json: String) throws -> ClientRequest {
        try ClientRequest.decode(Array(json.utf8)).get()
    }

    static func join(_ session: String, ref: Int = 1) throws -> ClientRequest {
        try request(#"{"type":"join","ref":\#(ref),"session":"\#(session)","name":"n","role":"editor"}"#)
    }

    static func ping(_ ref: Int) throws -> ClientRequest { try request(#"{"type":"ping","ref":\#(ref)}"#) }

    static let leave = try! request(#"{"type":"leave","ref":90}"#)
    static let watch = try! request(#"{"type":"overview.watch","ref":91}"#)
    static let add = try! request(#"{"type":"annotation.add","ref":92,"annotation":{"type":"point","id":"p","coordinate":{"latitude":1,"longitude":2}}}"#)

    @Test func requestsOfAConnectionInNoSessionOrOneOfThisHubAreServedHere() throws {
        var edge = Edge()
        #expect(edge.receive(try Self.ping(1), home: Self.home) == .serve)
        #expect(edge.receive(try Self.join("near"), home: Self.home) == .serve)
        #expect(edge.receive(Self.add, home: Self.home) == .serve)
        #expect(edge.route == .here && edge.replyHome == nil)
    }

    @Test func aJoinOfAnotherHubsSessionGoesThereAndWhatFollowsWaitsForItsAnswer() throws {
        var edge = Edge()
        #expect(edge.receive(try Self.join("far"), home: Self.home) == .forward(to: 2))
        #expect(edge.route == .awaiting(home: 2))
        // Replies made here go through that hub, after its answer.
        #expect(edge.replyHome == 2)
        let later = [try Self.ping(2), Self.add, Self.watch, Self.leave]
        for request in later { #expect(edge.receive(request, home: Self.home) == .hold) }
        #expect(edge.held == later)
        // Another hub's answer is not the one waited for.
        #expect(edge.answered(by: 3, .none).isEmpty)
        #expect(edge.route == .awaiting(home: 2))
        // The home's: joined there; what was held goes on, in order, and is forwarded now.
        #expect(edge.answered(by: 2, .at(home: 2)) == later)
        #expect(edge.held.isEmpty && edge.route == .joined(home: 2))
        #expect(edge.receive(try Self.ping(2), home: Self.home) == .forward(to: 2))
        #expect(edge.receive(Self.add, home: Self.home) == .forward(to: 2))
    }

    @Test func aMemberElsewhereHasItsWatchServedHereAndItsLeaveWaitsForItsAnswer() throws {
        var edge = Edge()
        _ = edge.receive(try Self.join("far"), home: Self.home)
        _ = edge.answered(by: 2, .at(home: 2))
        #expect(edge.receive(Self.watch, home: Self.home) == .serve)
        #expect(edge.receive(Self.leave, home: Self.home) == .forward(to: 2))
        #expect(edge.receive(try Self.join("near", ref: 3), home: Self.home) == .hold)
        // Left: the join held goes on, and is served here.
        let held = edge.answered(by: 2, .none)
        #expect(held == [try Self.join("near", ref: 3)] && edge.route == .here)
        #expect(edge.receive(held[0], home: Self.home) == .serve)
    }

    @Test func aRefusedJoinLeavesTheConnectionHere() throws {
        var edge = Edge()
        _ = edge.receive(try Self.join("far"), home: Self.home)
        _ = edge.receive(try Self.ping(2), home: Self.home)
        #expect(edge.answered(by: 2, .none) == [try Self.ping(2)])
        #expect(edge.route == .here && edge.replyHome == nil)
    }

    @Test func aJoinWhileInASessionHereIsServedHereWhereverItsSessionLives() throws {
        var edge = Edge()
        #expect(edge.receive(try Self.join("far"), inSession: true, home: Self.home) == .serve)
        #expect(edge.route == .here)
    }

    @Test func anInvalidSessionNameIsServedHereToBeRefused() throws {
        var edge = Edge()
        let bad = try Self.request(#"{"type":"join","ref":1,"session":"far away!","name":"n","role":"editor"}"#)
        #expect(edge.receive(bad, home: Self.home) == .serve)
    }

    @Test func aJoinWaitingForItsSessionHereHoldsWhatFollowsAndRepliesGoStraightOut() throws {
        var edge = Edge()
        #expect(edge.receive(try Self.join("near"), home: Self.home) == .serve)
        edge.wait(for: nil)
        #expect(edge.replyHome == nil)
        #expect(edge.receive(Self.watch, home: Self.home) == .hold)
        #expect(edge.receive(Self.add, home: Self.home) == .hold)
        // A remote hub's answer does not end a wait here.
        #expect(edge.answered(by: 2, .none).isEmpty && edge.route == .awaiting(home: nil))
        #expect(edge.answered(by: nil, .here) == [Self.watch, Self.add])
        #expect(edge.route == .here)
    }

    @Test func aJoinSentOnToAnotherHubKeepsWhatIsHeldForThatHubsAnswer() throws {
        var edge = Edge()
        _ = edge.receive(try Self.join("near"), home: Self.home)
        edge.wait(for: nil)
        _ = edge.receive(Self.add, home: Self.home)
        // Loaded here, the session was found to be another node's (hub 5, the gateway).
        edge.wait(for: 5)
        #expect(edge.route == .awaiting(home: 5) && edge.held == [Self.add])
        #expect(edge.answered(by: 5, .at(home: 5)) == [Self.add])
        #expect(edge.route == .joined(home: 5))
    }

    @Test func anAnswerFromTheHubAJoinWasSentOnToLetsTheHeldRequestsGo() throws {
        var edge = Edge()
        _ = edge.receive(try Self.join("far"), home: Self.home)
        _ = edge.receive(Self.add, home: Self.home)
        // Hub 2 sent the join on to hub 4, which answers first: the connection is in a
        // session of hub 4, and nothing held is lost.
        #expect(edge.answered(by: 4, .at(home: 4)) == [Self.add])
        #expect(edge.route == .joined(home: 4))
    }

    @Test func aMemberReplacedAtItsHomeIsBackHere() throws {
        var edge = Edge()
        _ = edge.receive(try Self.join("far"), home: Self.home)
        _ = edge.answered(by: 2, .at(home: 2))
        #expect(edge.answered(by: 3, .none).isEmpty && edge.route == .joined(home: 2))
        #expect(edge.answered(by: 2, .none).isEmpty && edge.route == .here)
    }

    @Test func pastTheLimitHeldRequestsAreRefusedNamingTheWait() throws {
        var remote = Edge(), local = Edge()
        _ = remote.receive(try Self.join("far"), home: Self.home)
        _ = local.receive(try Self.join("near"), home: Self.home)
        local.wait(for: nil)
        for ref in 0..<Edge.limit {
            #expect(remote.receive(try Self.ping(ref), home: Self.home) == .hold)
            #expect(local.receive(try Self.ping(ref), home: Self.home) == .hold)
        }
        #expect(remote.receive(Self.add, home: Self.home)
            == .refuse("annotation.add: the join or leave before it is still waiting for its answer, with 1024 requests behind it"))
        #expect(local.receive(Self.add, home: Self.home)
            == .refuse("annotation.add: the join is still waiting for its session, with 1024 requests behind it"))
        // Refused, not held: the answer lets exactly the limit go on.
        #expect(remote.answered(by: 2, .at(home: 2)).count == Edge.limit)
        #expect(local.answered(by: nil, .here).count == Edge.limit)
    }

    @Test func aHubThatIsTheConnectionsHomeNeverSendsItsRequestsOn() throws {
        var edge = Edge()
        #expect(edge.receive(try Self.join("far"), home: { _ in nil }) == .serve)
        #expect(edge.route == .here)
    }

    @Test func aHomeServesTheMembersItKnowsAdoptsANewMembersJoinAndSendsOnAJoinOfAnotherHub() throws {
        #expect(Home.forwarded(Self.add, known: true, home: Self.home) == .serve)
        #expect(Home.forwarded(try Self.join("far"), known: true, home: Self.home) == .serve)
        #expect(Home.forwarded(try Self.join("near"), known: false, home: Self.home) == .adopt)
        // The session's home changed on the way (or it is another node's): the join goes on.
        #expect(Home.forwarded(try Self.join("far"), known: false, home: Self.home) == .reroute(to: 2))
        // A member that left or was replaced while this was on its way.
        #expect(Home.forwarded(Self.add, known: false, home: Self.home) == .refuse("annotation.add needs a joined session; send join first"))
        #expect(Home.forwarded(Self.leave, known: false, home: Self.home) == .refuse("leave needs a joined session; send join first"))
    }
}

