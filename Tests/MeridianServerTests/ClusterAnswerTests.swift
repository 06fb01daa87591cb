import MeridianProtocol
import MeridianTransport
import Testing

@testable import MeridianServer

/// An edge's join that another node never answers (the answer was lost between nodes) ends in a
/// close with 4012, so that the client joins again: every request is answered (SPEC §2).
@Suite struct ClusterAnswerTests {
    static func joinRequest(_ session: String) throws -> ClientRequest {
        let text = Array(#"{"type":"join","ref":1,"session":"\#(session)","name":"A","role":"editor"}"#.utf8)
        var request = try ClientRequest.decode(text).get()
        request.text = text
        return request
    }

    @Test func aJoinNoNodeAnswersIsClosedWith4012AfterTheLimitAndAnAnsweredOneIsNot() throws {
        // The other node is never there: what the gateway publishes goes to a broker in memory.
        let publisher = MemoryBroker().client().publisher { _, _ in }
        defer { publisher.stop() }
        let local = LocalRelay(hubs: 1)
        let gateway = ClusterGateway(local: local, publisher: publisher)
        gateway.assign(node: 1)
        gateway.learnOwner("far", is: 2)
        let unanswered = ConnectionID(rawValue: 7), answered = ConnectionID(rawValue: 8)
        gateway.post(.request(try Self.joinRequest("far"), from: unanswered, peer: "127.0.0.1", handshakeGrant: nil))
        gateway.post(.request(try Self.joinRequest("far"), from: answered, peer: "127.0.0.1", handshakeGrant: nil))
        // Node 2 answers one of them.
        gateway.receive(ClusterWire.encode(.membership(answered, session: "far"), from: 2))
        _ = local.take(for: 0)

        gateway.closeUnanswered(after: .seconds(60))
        #expect(local.take(for: 0).isEmpty, "closed before its time")
        gateway.closeUnanswered(after: .zero)
        let closes = local.take(for: 0).compactMap { message -> (ConnectionID, UInt16)? in
            if case .close(let connection, let code, _) = message { (connection, code) } else { nil }
        }
        #expect(closes.map(\.0) == [unanswered] && closes.map(\.1) == [CloseCode.sessionMoved], "\(closes)")
        gateway.closeUnanswered(after: .zero)
        #expect(local.take(for: 0).isEmpty, "closed twice")
    }
}
