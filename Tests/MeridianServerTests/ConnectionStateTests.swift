import Foundation
import MeridianAuth
import MeridianCore
import MeridianProtocol
import Testing

@testable import MeridianServer

/// One connection's state machine without a hub or a socket, on a clock the test moves: what
/// each request becomes (served, sent on, held, refused, waiting for the rate limit), when the
/// connection is closed for erring, and what answers and moves do to it.
@Suite("Connection state")
struct ConnectionStateTests {
    /// Two requests at once, then one every 100 ms; closed after three errors in a second.
    static let rules = ConnectionState.Rules(rateLimit: RateLimit(perSecond: 10, burst: 2), maxProtocolErrors: 3, abuseWindow: .seconds(1))
    /// Sessions whose name starts with "far" live on hub 2; the others on this hub.
    static func home(_ session: String) -> Int? { session.hasPrefix("far") ? 2 : nil }

    static func request(_ json: String) throws -> ClientRequest { try ClientRequest.decode(Array(json.utf8)).get() }
    static func ping(_ ref: Int) throws -> ClientRequest { try request(#"{"type":"ping","ref":\#(ref)}"#) }
    static func join(_ session: String, ref: Int = 1, handover: Bool = false) throws -> ClientRequest {
        try request(#"{"type":"join","ref":\#(ref),"session":"\#(session)","name":"n","role":"editor","handover":\#(handover)}"#)
    }
    static func camera(_ ref: Int, latitude: Double = 1) throws -> ClientRequest {
        try request(#"{"type":"camera.changing","ref":\#(ref),"target":"shared","camera":{"center":{"latitude":\#(latitude),"longitude":2},"zoom":3}}"#)
    }
    static func cameraEnd(_ ref: Int) throws -> ClientRequest {
        try request(#"{"type":"camera.end","ref":\#(ref),"target":"shared","camera":{"center":{"latitude":1,"longitude":2},"zoom":3}}"#)
    }

    static func ref(_ n: Int) -> RequestRef { RequestRef(json: Array("\(n)".utf8)) }

    static func receive(_ request: ClientRequest, _ state: inout ConnectionState, at ms: Int = 0) -> [ConnectionState.Action] {
        state.receive(request, at: .milliseconds(ms), rules: rules, home: home)
    }

    static func refusal(_ actions: [ConnectionState.Action]) -> (SessionError.Code, String, Int?)? {
        for case .refuse(_, _, let code, let message, let retry) in actions { return (code, message, retry) }
        return nil
    }

    @Test func theBurstIsServedAndTheNextRequestIsRefusedByNameWithTheTimeToItsToken() throws {
        var state = ConnectionState(peer: "p", handshakeGrant: nil)
        #expect(Self.receive(try Self.ping(1), &state) == [.serve(try Self.ping(1))])
        #expect(Self.receive(try Self.ping(2), &state) == [.serve(try Self.ping(2))])
        let refused = try #require(Self.refusal(Self.receive(try Self.ping(3), &state)))
        #expect(refused.0 == .rateLimited && refused.2 == 100)
        #expect(refused.1.hasPrefix("ping: over 10 requests/s (burst 2)"), "\(refused.1)")
        #expect(Self.receive(try Self.ping(4), &state, at: 100) == [.serve(try Self.ping(4))])
    }

    @Test func aConnectionThatKeepsErringIsClosedWith4009AndOldErrorsAreForgotten() throws {
        var state = ConnectionState(peer: "p", handshakeGrant: nil)
        for ms in [0, 10, 20] {
            let actions = state.erred(at: .milliseconds(ms), rules: Self.rules)
            #expect(actions.isEmpty)
        }
        // A second later the first three are out of the window.
        let later = state.erred(at: .milliseconds(1_015), rules: Self.rules)
        #expect(later.isEmpty)
        let again = state.erred(at: .milliseconds(1_016), rules: Self.rules)
        #expect(again.isEmpty)
        let fourth = state.erred(at: .milliseconds(1_017), rules: Self.rules)
        #expect(fourth == [.close(code: CloseCode.abusive, reason: "too many invalid requests")])
    }

    @Test func refusalsForTheRateLimitCountAsErrors() throws {
        var state = ConnectionState(peer: "p", handshakeGrant: nil)
        _ = Self.receive(try Self.ping(1), &state)
        _ = Self.receive(try Self.ping(2), &state)
        for ref in 3...5 { #expect(!Self.receive(try Self.ping(ref), &state).contains { if case .close = $0 { true } else { false } }) }
        #expect(Self.receive(try Self.ping(6), &state).last == .close(code: CloseCode.abusive, reason: "too many invalid requests"))
    }

    @Test func overTheLimitMovesWaitTheNewestReplacesTheOlderAndNothingOvertakesThem() throws {
        var state = ConnectionState(peer: "p", handshakeGrant: nil)
        _ = Self.receive(try Self.ping(1), &state)
        _ = Self.receive(try Self.ping(2), &state)
        #expect(Self.receive(try Self.camera(3), &state) == [.waitForTokens])
        #expect(Self.receive(try Self.camera(4, latitude: 4), &state) == [.conflate(Self.ref(3)), .waitForTokens])
        #expect(state.isWaitingForTokens)
        // A token has come, but the move waiting before it goes first: camera.end is refused.
        let end = Self.receive(try Self.cameraEnd(5), &state, at: 150)
        #expect(end.first == .serve(try Self.camera(4, latitude: 4)))
        #expect(Self.refusal(end)?.0 == .rateLimited)
        #expect(!state.isWaitingForTokens)
        let none = state.release(at: .milliseconds(400), rules: Self.rules)
        #expect(none.isEmpty)
    }

    @Test func waitingMovesAreServedAsTokensCome() throws {
        var state = ConnectionState(peer: "p", handshakeGrant: nil)
        _ = Self.receive(try Self.ping(1), &state)
        _ = Self.receive(try Self.ping(2), &state)
        _ = Self.receive(try Self.camera(3), &state)
        let early = state.release(at: .milliseconds(50), rules: Self.rules)
        #expect(early.isEmpty)
        let onTime = state.release(at: .milliseconds(100), rules: Self.rules)
        #expect(onTime == [.serve(try Self.camera(3))])
        #expect(!state.isWaitingForTokens)
    }

    @Test func aJoinOfAnotherHubsSessionGoesOnAndWhatFollowsIsHeldUntilItsAnswer() throws {
        var state = ConnectionState(peer: "p", handshakeGrant: nil)
        #expect(Self.receive(try Self.join("far", handover: true), &state) == [.forward(try Self.join("far", handover: true), to: 2)])
        #expect(state.homes == 1 << 2 && state.rejoin != nil)
        #expect(Self.receive(try Self.ping(2), &state).isEmpty, "held behind the join")
        let held = state.receive(.answered(by: 2, .at(home: 2)))
        #expect(held == [.resume([try Self.ping(2)])])
        // Joined there: everything goes there, without a token taken here.
        for ref in 3...6 { #expect(Self.receive(try Self.ping(ref), &state) == [.forward(try Self.ping(ref), to: 2)]) }
        // The session moved to another node: the join goes again, as it came.
        let rejoin = state.handedOver(through: 2)
        #expect(rejoin == (try Self.join("far", handover: true)))
        #expect(state.edge.route == .here)
        let twice = state.handedOver(through: 2)
        #expect(twice == nil, "only a member routed there is moved")
    }

    @Test func aJoinWithoutHandoverIsNotRepeated() throws {
        var state = ConnectionState(peer: "p", handshakeGrant: nil)
        _ = Self.receive(try Self.join("far"), &state)
        _ = state.receive(.answered(by: 2, .at(home: 2)))
        let rejoin = state.handedOver(through: 2)
        #expect(rejoin == nil)
    }

    @Test func atItsHomeAForwardedRequestIsServedNotSentOnAgain() throws {
        var state = ConnectionState(peer: "p", handshakeGrant: nil, isEdge: false)
        #expect(Self.receive(try Self.join("far"), &state) == [.serve(try Self.join("far"))])
        #expect(state.homes == 0 && state.rejoin == nil, "the edge keeps the route and the rejoin")
    }

    @Test func requestsWaitBehindAJoinWaitingForItsSessionToLoadAndGoOnWhenItIsAnswered() throws {
        var state = ConnectionState(peer: "p", handshakeGrant: nil, isEdge: false)
        _ = state.receive(.waitingForLoad(ticket: 7))
        #expect(Self.receive(try Self.ping(1), &state).isEmpty)
        _ = state.receive(.loaded(ticket: 6))
        #expect(state.loadTicket == 7, "another load's ticket")
        let waiting = state.receive(.loadAnswered)
        #expect(waiting.isEmpty, "still waiting")
        _ = state.receive(.loaded(ticket: 7))
        #expect(state.loadTicket == nil)
        _ = state.receive(.joined(ConnectionState.Member(session: "near", participant: "ann", grant: nil)))
        let held = state.receive(.loadAnswered)
        #expect(held == [.resume([try Self.ping(1)])])
        #expect(state.sessionID == "near" && state.participant == "ann")
        let again = state.receive(.loadAnswered)
        #expect(again.isEmpty, "answered once")
        _ = state.receive(.left)
        #expect(state.sessionID == nil && state.participant == nil)
    }

    @Test func aJoinSentOnToAnotherNodeKeepsWhatIsHeldForThatHomesAnswer() throws {
        var state = ConnectionState(peer: "p", handshakeGrant: nil)
        _ = state.receive(.waitingForLoad(ticket: 1))
        _ = Self.receive(try Self.ping(1), &state)
        _ = state.receive(.loaded(ticket: 1))
        let sentOn = state.receive(.sentOn(to: 3))
        #expect(sentOn.isEmpty, "the edge keeps the connection")
        let waiting = state.receive(.loadAnswered)
        #expect(waiting.isEmpty, "now waiting for hub 3")
        #expect(state.homes == 1 << 3)
        let held = state.receive(.answered(by: 3, .none))
        #expect(held == [.resume([try Self.ping(1)])])
    }

    @Test func aHomeForgetsAConnectionWhoseJoinWentOnAndAnEdgeFollowsOnlyAWaitingJoin() throws {
        var home = ConnectionState(peer: "p", handshakeGrant: nil, isEdge: false)
        #expect(home.receive(.sentOn(to: 3)) == [.forget])
        var edge = ConnectionState(peer: "p", handshakeGrant: nil)
        #expect(edge.receive(.rerouted(to: 4)).isEmpty && edge.edge.route == .here, "no join waits: nothing to follow")
        _ = Self.receive(try Self.join("far"), &edge)
        _ = edge.receive(.rerouted(to: 4))
        #expect(edge.edge.route == .awaiting(home: 4) && edge.homes == 1 << 2 | 1 << 4)
    }

    @Test func aRefreshedGrantReplacesTheJoinedOneAndAnExpiredOneIsDropped() throws {
        var state = ConnectionState(peer: "p", handshakeGrant: nil)
        let first = AccessGrant(participant: "ann", name: nil, sessions: "s", role: .editor, expires: .distantFuture)
        let second = AccessGrant(participant: "ann", name: "Ann", sessions: "s", role: .editor, expires: .distantFuture)
        _ = state.receive(.refreshed(first))
        #expect(state.grant == nil, "not joined: nothing to refresh")
        _ = state.receive(.joined(ConnectionState.Member(session: "s", participant: "ann", grant: first)))
        _ = state.receive(.refreshed(second))
        #expect(state.grant == second)
        _ = state.receive(.grantExpired)
        #expect(state.grant == nil && state.sessionID == "s")
    }
}
