import MeridianTransport
import Testing

@testable import MeridianServer

/// The cluster gateway's two roles without a broker, threads or a clock of their own: as the
/// edge of this node's members served elsewhere, and as the owner of sessions with members on
/// other nodes.
@Suite("Gateway edge")
struct GatewayEdgeTests {
    static let ann = ConnectionID(tag: 0, serial: 1)
    static let ben = ConnectionID(tag: 1, serial: 2)
    static let start = ContinuousClock.now

    @Test func aJoinGoesToItsSessionsOwnerAndMakesThisNodeHearTheSession() {
        var edge = GatewayEdge()
        let routed = edge.forward(Self.ann, join: "harbour", owners: ["harbour": 2], at: Self.start)
        #expect(routed?.node == 2)
        #expect(routed?.changes == GatewayEdge.ChannelChanges(subscribe: ["harbour"]))
        // A second member of the same session adds no subscription.
        #expect(edge.forward(Self.ben, join: "harbour", owners: ["harbour": 2], at: Self.start)?.changes.isEmpty == true)
        // Later requests follow the route, whoever is said to own what.
        #expect(edge.forward(Self.ann, join: nil, owners: [:], at: Self.start)?.node == 2)
        #expect(edge.forward(ConnectionID(tag: 0, serial: 9), join: "nowhere", owners: [:], at: Self.start) == nil, "no owner known")
    }

    @Test func theOwnerIsToldThisNodeHearsTheSessionOnceTheBrokerConfirmsIt() {
        var edge = GatewayEdge()
        var owners = ["harbour": 2]
        _ = edge.forward(Self.ann, join: "harbour", owners: owners, at: Self.start)
        #expect(edge.confirmed("harbour", owners: owners) == 2)
        #expect(edge.confirmed("harbour", owners: owners) == nil, "told once")
        #expect(edge.confirmed("quay", owners: owners) == nil, "nobody here is in quay")
        // The session's owner changed: the new one is told with the membership it sends.
        let moved = edge.membership(Self.ann, session: "harbour", from: 3, owners: &owners)
        #expect(owners["harbour"] == 3 && moved.tell == "harbour")
        // The last member leaves: the channel is dropped, and its owner told.
        let left = edge.leave(Self.ann)
        #expect(left.nodes == [2, 3])
        #expect(left.changes.unsubscribe == [GatewayEdge.ChannelChanges.Unsubscribe(session: "harbour", owner: 3)])
    }

    @Test func requestsWithNoAnswerForLongerThanTheLimitAreOverdue() {
        var edge = GatewayEdge()
        _ = edge.forward(Self.ann, join: "harbour", owners: ["harbour": 2], at: Self.start)
        _ = edge.forward(Self.ann, join: nil, owners: [:], at: Self.start + .seconds(1))
        #expect(edge.overdue(after: .seconds(5), at: Self.start + .seconds(5)).isEmpty)
        // One of two answered: the wait restarts from that answer.
        edge.answered(Self.ann, at: Self.start + .seconds(4))
        #expect(edge.overdue(after: .seconds(5), at: Self.start + .seconds(8)).isEmpty)
        #expect(edge.overdue(after: .seconds(5), at: Self.start + .seconds(10)) == [Self.ann])
        #expect(edge.unanswered.isEmpty, "an overdue member is closed, not waited for again")
        // Both answered: nothing is owed.
        _ = edge.forward(Self.ben, join: "harbour", owners: ["harbour": 2], at: Self.start)
        edge.answered(Self.ben, at: Self.start)
        #expect(edge.overdue(after: .zero, at: Self.start + .seconds(60)).isEmpty)
    }

    @Test func aMemberMovedInPlaceIsNotSentBackToTheNodesThatServedItUntilItCloses() {
        var edge = GatewayEdge()
        var owners = ["harbour": 2]
        _ = edge.forward(Self.ann, join: "harbour", owners: owners, at: Self.start)
        let left = edge.leave(Self.ann)
        edge.retire(Self.ann, from: left.nodes, session: "harbour", owners: &owners)
        #expect(owners["harbour"] == nil, "the old owner is forgotten")
        #expect(edge.forward(Self.ann, join: "harbour", owners: ["harbour": 2], at: Self.start) == nil)
        #expect(edge.forward(Self.ann, join: "harbour", owners: ["harbour": 4], at: Self.start)?.node == 4)
        edge.unretire(Self.ann)
        #expect(edge.retired.isEmpty)
    }

    @Test func whenANodeGoesOrTheLinkBreaksTheMembersRoutedThereAreNamed() {
        var edge = GatewayEdge()
        var owners = ["harbour": 2, "quay": 3]
        _ = edge.forward(Self.ann, join: "harbour", owners: owners, at: Self.start)
        _ = edge.forward(Self.ben, join: "quay", owners: owners, at: Self.start)
        _ = edge.membership(Self.ann, session: "harbour", from: 2, owners: &owners)
        #expect(edge.routed(to: 2).map(\.0) == [Self.ann])
        #expect(edge.routed(to: 2).first?.1 == "harbour")
        #expect(edge.routedOwners(owners) == owners)
        #expect(edge.members(of: "quay") == [Self.ben])
        #expect(edge.linkLost() == [Self.ann, Self.ben])
    }
}

@Suite("Gateway owner")
struct GatewayOwnerTests {
    static let gateway = 2
    static let far = RemoteConnection(node: 5, connection: ConnectionID(tag: 0, serial: 7))
    static let other = RemoteConnection(node: 6, connection: ConnectionID(tag: 1, serial: 7))
    static func home(_ session: String) -> Int { session == "harbour" ? 1 : 0 }

    @Test func anotherNodesMemberGetsOneAliasAndItsRequestsFollowItsJoin() {
        var owner = GatewayOwner(index: Self.gateway)
        let joined = owner.request(from: Self.far, join: "harbour", ownedElsewhere: false, home: Self.home)
        #expect(joined.hub == 1 && owner.isAlias(joined.alias))
        let next = owner.request(from: Self.far, join: nil, ownedElsewhere: false, home: Self.home)
        #expect(next.alias == joined.alias && next.hub == 1)
        #expect(owner.echo(from: Self.far)?.hub == 1)
        // A join of a session yet another node owns goes back out through the gateway.
        #expect(owner.request(from: Self.far, join: "quay", ownedElsewhere: true, home: Self.home).hub == Self.gateway)
        #expect(owner.request(from: Self.far, join: nil, ownedElsewhere: false, home: Self.home).hub == 1, "the gateway is not a hub it serves on")
        #expect(owner.forget(Self.far)?.hubs == [1])
        #expect(owner.echo(from: Self.far) == nil && owner.forget(Self.far) == nil)
    }

    @Test func aBroadcastGoesOnTheSessionsChannelToTheNodesThatHearIt() {
        var owner = GatewayOwner(index: Self.gateway)
        let a = owner.request(from: Self.far, join: "harbour", ownedElsewhere: false, home: Self.home).alias
        let b = owner.request(from: Self.other, join: "harbour", ownedElsewhere: false, home: Self.home).alias
        _ = owner.membership(a, session: "harbour")
        #expect(owner.membership(b, session: "harbour") == Self.other)
        owner.listens(5, to: "harbour", true)
        let sent = owner.targets(of: [a, b], except: b)
        #expect(sent.byNode == [FrameTarget(node: 5, members: [Self.far.connection], skip: nil),
                                FrameTarget(node: 6, members: [Self.other.connection], skip: Self.other.connection)])
        #expect(sent.session == "harbour" && sent.listening == [5])
        // A frame for one member goes to its node's inbox alone.
        #expect(owner.targets(of: [a], except: nil).session == nil)
        owner.listens(5, to: "harbour", false)
        #expect(owner.listeners.isEmpty)
    }

    @Test func aMessageInFragmentsLeavesWholeOnceItsLastFragmentIsHere() {
        var owner = GatewayOwner(index: Self.gateway)
        let a = owner.request(from: Self.far, join: "harbour", ownedElsewhere: false, home: Self.home).alias
        let parts: [[UInt8]] = [Array("{\"a\":".utf8), Array("[1,2]".utf8), Array("}".utf8)]
        let first = parts[0].withUnsafeBytes { owner.fragment($0, first: true, last: false, for: [a]) }
        let middle = parts[1].withUnsafeBytes { owner.fragment($0, first: false, last: false, for: [a]) }
        #expect(first.isEmpty && middle.isEmpty)
        let whole = parts[2].withUnsafeBytes { owner.fragment($0, first: false, last: true, for: [a]) }
        #expect(whole.count == 1 && whole.first?.0 == Self.far)
        #expect(whole.first?.1 == Array("{\"a\":[1,2]}".utf8))
    }

    @Test func whenANodeGoesItsMembersAliasesAreForgottenAndItHearsNothing() {
        var owner = GatewayOwner(index: Self.gateway)
        let a = owner.request(from: Self.far, join: "harbour", ownedElsewhere: false, home: Self.home).alias
        _ = owner.request(from: Self.other, join: "quay", ownedElsewhere: false, home: Self.home)
        owner.listens(5, to: "harbour", true)
        #expect(owner.nodes == [5, 6])
        let gone = owner.nodeGone(5)
        #expect(gone.map(\.alias) == [a] && gone.first?.hubs == [1])
        #expect(owner.nodes == [6] && owner.listeners.isEmpty)
        #expect(owner.linkLost().count == 1 && owner.nodes.isEmpty)
    }
}
