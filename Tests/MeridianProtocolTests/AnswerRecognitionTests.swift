import MeridianCore
@testable import MeridianProtocol
import Testing

/// `ServerMessage.isAnswer`: what an edge node counts as the answer to a request it sent on to
/// another node. Every answer encoder's output is one, from its first bytes; no other message is.
@Suite("Telling answers from events")
struct AnswerRecognitionTests {
    static func isAnswer(_ bytes: [UInt8]) -> Bool { bytes.withUnsafeBytes { ServerMessage.isAnswer($0) } }

    @Test func everyAnswerIsOneWhateverItsRefAndFirstFragment() throws {
        var session = Session(id: "s", epoch: "e", settings: KeyOrderTests.settings)
        guard case .success(let (pid, _)) = session.join(JoinRequest(name: "Ada", role: .owner), at: .zero) else {
            Issue.record("join")
            return
        }
        for ref in [RequestRef.integer(1), .string("r"), .null] {
            #expect(Self.isAnswer(ServerMessage.ack(ref: ref, seq: 1, camera: KeyOrderTests.camera)))
            #expect(Self.isAnswer(ServerMessage.conflated(ref: ref, seq: 1)))
            #expect(Self.isAnswer(ServerMessage.error(ref: ref, code: .notJoined, message: "no")))
            #expect(Self.isAnswer(ServerMessage.welcome(ref: ref, session: session, participant: pid, resumedFrom: nil,
                                                        annotations: ServerMessage.annotationsJSON(session))))
            #expect(Self.isAnswer(ServerMessage.welcome(ref: ref, session: session, participant: pid, resumedFrom: 0, annotations: [])))
            // A welcome sent in fragments: its first.
            var head = JSONOutput()
            ServerMessage.welcomeHead(ref: ref, session: session, participant: pid, resumedFrom: nil, into: &head)
            #expect(Self.isAnswer(head.bytes))
        }
    }

    @Test func noEventOrOtherMessageIsOne() throws {
        var session = Session(id: "s", epoch: "e", settings: KeyOrderTests.settings)
        _ = session.join(JoinRequest(name: "Ada", role: .owner), at: .zero)
        for event in KeyOrderTests.events {
            #expect(!Self.isAnswer(ServerMessage.event(Emitted(event: event, seq: 3))), "\(event)")
        }
        #expect(!Self.isAnswer(ServerMessage.live(session)))
        #expect(!Self.isAnswer(ServerMessage.skipped(seq: 2)))
        #expect(!Self.isAnswer(ServerMessage.overview([], connections: 0)))
        #expect(!Self.isAnswer(ServerMessage.dragRefused(seq: 4, annotation: "pin", participant: "p2", holder: nil)))
        // A part of an answer that is not its start (a later fragment), and a short message.
        let ack = ServerMessage.ack(ref: .integer(1), seq: 1)
        #expect(!Self.isAnswer(Array(ack.dropFirst())))
        #expect(!Self.isAnswer(Array(#"{"type":"ack""#.utf8)))
    }
}
