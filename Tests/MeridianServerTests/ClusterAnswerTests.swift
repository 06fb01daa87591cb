import MeridianProtocol
import MeridianTransport
import Testing

@testable import MeridianServer

/// An edge's requests that another node never answers (the request or its answer was lost
/// between nodes) end in a close with 4012 once the connection has waited the limit with no
/// answer coming, so that the client joins again: every request is answered (SPEC §2).
@Suite struct ClusterAnswerTests {
    static func request(_ text: String) throws -> ClientRequest {
        let bytes = Array(text.utf8)
        var request = try ClientRequest.decode(bytes).get()
        request.text = bytes
        return request
    }

    static func joinRequest(_ session: String) throws -> ClientRequest {
        try request(#"{"type":"join","ref":1,"session":"\#(session)","name":"A","role":"editor"}"#)
    }

    static let add = #"{"type":"annotation.add","ref":2,"annotation":{"type":"point","id":"p","coordinate":{"latitude":1,"longitude":2}}}"#

    /// A node with one hub whose gateway's other node is never there: what it publishes goes to a
    /// broker in memory. Node 2 owns session "far".
    static func edge() -> (ClusterGateway, LocalRelay, any ChannelPublisher) {
        let publisher = MemoryBroker().client().publisher { _, _ in }
        let local = LocalRelay(hubs: 1)
        let gateway = ClusterGateway(local: local, publisher: publisher)
        gateway.assign(node: 1)
        gateway.learnOwner("far", is: 2)
        return (gateway, local, publisher)
    }

    /// Node 2's frame for `member` of node 1.
    static func frame(_ text: String, to member: ConnectionID) -> [UInt8] {
        let wire = OutboundFrame(text: text).relayable.wire.wireBytes
        return ClusterWire.encode(.frame(wire: wire, shared: false, token: nil, supersedes: nil,
                                         targets: [FrameTarget(node: 1, members: [member], skip: nil)]), from: 2)
    }

    static func closes(_ local: LocalRelay) -> [(ConnectionID, UInt16)] {
        local.take(for: 0).compactMap { message -> (ConnectionID, UInt16)? in
            if case .close(let connection, let code, _) = message { (connection, code) } else { nil }
        }
    }

    @Test func aJoinNoNodeAnswersIsClosedWith4012AfterTheLimitAndAnAnsweredOneIsNot() throws {
        let (gateway, local, publisher) = Self.edge()
        defer { publisher.stop() }
        let unanswered = ConnectionID(rawValue: 7), answered = ConnectionID(rawValue: 8)
        gateway.post(.request(try Self.joinRequest("far"), from: unanswered, peer: "127.0.0.1", handshakeGrant: nil))
        gateway.post(.request(try Self.joinRequest("far"), from: answered, peer: "127.0.0.1", handshakeGrant: nil))
        // Node 2 answers one of them: its membership, then its welcome.
        gateway.receive(ClusterWire.encode(.membership(answered, session: "far"), from: 2))
        gateway.receive(Self.frame(#"{"type":"welcome","ref":1,"session":"far"}"#, to: answered))
        _ = local.take(for: 0)

        gateway.closeUnanswered(after: .seconds(60))
        #expect(local.take(for: 0).isEmpty, "closed before its time")
        gateway.closeUnanswered(after: .zero)
        let closes = Self.closes(local)
        #expect(closes.map(\.0) == [unanswered] && closes.map(\.1) == [CloseCode.sessionMoved], "\(closes)")
        gateway.closeUnanswered(after: .zero)
        #expect(local.take(for: 0).isEmpty, "closed twice")
    }

    /// Node 2 sends a join for "far" here, and this node takes node 2 for its owner: each takes
    /// the other for the owner. The join is not sent back to go round between them: it goes to
    /// this node's hub, whose load asks Redis, and the owner heard of is forgotten.
    @Test func aJoinFromTheNodeTakenForTheOwnerIsServedHereNotSentBack() throws {
        let (gateway, local, publisher) = Self.edge()
        defer { publisher.stop() }
        let origin = RemoteConnection(node: 2, connection: ConnectionID(rawValue: 7))
        let text = Array(#"{"type":"join","ref":1,"session":"far","name":"A","role":"editor"}"#.utf8)
        gateway.receive(ClusterWire.encode(.request(origin: origin, peer: "127.0.0.1", grant: nil, text: text), from: 2))
        let posted = local.take(for: 0).compactMap { message -> String? in
            if case .request(let request, _, _, _) = message, case .join(let session, _, _) = request.body { session } else { nil }
        }
        #expect(posted == ["far"], "the join did not reach this node's hub")
        #expect(gateway.owner(of: "far") == nil)
        #expect(gateway.traffic.sent == 0, "the join went back to node 2")
    }

    /// A member joined at node 2 whose write is lost: the events node 2 sends it meanwhile are
    /// not answers, and it is closed; one whose writes were all answered is not, nor is one owed
    /// an answer to a reply of its own edge that went through node 2.
    @Test func aWriteNoNodeAnswersIsClosedWhateverEventsComeAndEveryAnswerCounts() throws {
        let (gateway, local, publisher) = Self.edge()
        defer { publisher.stop() }
        let lost = ConnectionID(rawValue: 7), served = ConnectionID(rawValue: 8), echoed = ConnectionID(rawValue: 9)
        for member in [lost, served, echoed] {
            gateway.post(.request(try Self.joinRequest("far"), from: member, peer: "127.0.0.1", handshakeGrant: nil))
            gateway.receive(ClusterWire.encode(.membership(member, session: "far"), from: 2))
            gateway.receive(Self.frame(#"{"type":"welcome","ref":1,"session":"far"}"#, to: member))
        }
        for member in [lost, served] {
            gateway.post(.request(try Self.request(Self.add), from: member, peer: "127.0.0.1", handshakeGrant: nil))
            gateway.post(.request(try Self.request(Self.add), from: member, peer: "127.0.0.1", handshakeGrant: nil))
        }
        let reply = OutboundFrame(text: #"{"type":"error","ref":3,"code":"not_joined","message":"m"}"#).relayable
        gateway.post(.echo(RelayedFrame(frame: reply, token: nil, supersedes: nil), to: echoed))
        _ = local.take(for: 0)

        // Events for `lost` (to it alone, and to all three), and one of its two answers.
        gateway.receive(Self.frame(#"{"type":"annotation.added","seq":5}"#, to: lost))
        gateway.receive(ClusterWire.encode(.frame(wire: OutboundFrame(text: #"{"type":"annotation.added","seq":6}"#).relayable.wire.wireBytes,
                                                  shared: true, token: nil, supersedes: nil,
                                                  targets: [FrameTarget(node: 1, members: [lost, served, echoed], skip: nil)]), from: 2))
        gateway.receive(Self.frame(#"{"type":"ack","ref":2,"seq":5}"#, to: lost))
        // Both answers for `served`, an error among them.
        gateway.receive(Self.frame(#"{"type":"ack","ref":2,"seq":7}"#, to: served))
        gateway.receive(Self.frame(#"{"type":"error","ref":2,"code":"invalid_field","message":"m"}"#, to: served))
        _ = local.take(for: 0)

        gateway.closeUnanswered(after: .zero)
        #expect(Self.closes(local).map(\.0) == [lost, echoed])
        // The echoed reply comes back: nothing is owed to any connection now.
        gateway.receive(Self.frame(#"{"type":"error","ref":3,"code":"not_joined","message":"m"}"#, to: echoed))
        gateway.post(.echo(RelayedFrame(frame: reply, token: nil, supersedes: nil), to: echoed))
        gateway.receive(Self.frame(#"{"type":"error","ref":3,"code":"not_joined","message":"m"}"#, to: echoed))
        gateway.closeUnanswered(after: .zero)
        #expect(Self.closes(local).isEmpty)
    }

    /// A connection that closed owes nothing: its entry goes with it.
    @Test func aClosedConnectionIsNotClosedAgain() throws {
        let (gateway, local, publisher) = Self.edge()
        defer { publisher.stop() }
        let member = ConnectionID(rawValue: 7)
        gateway.post(.request(try Self.joinRequest("far"), from: member, peer: "127.0.0.1", handshakeGrant: nil))
        gateway.post(.closed(member, code: 1000, reason: "bye"))
        _ = local.take(for: 0)
        gateway.closeUnanswered(after: .zero)
        #expect(Self.closes(local).isEmpty)
    }
}
