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

    /// `ServerMessage.typeIndex`: the type of every encoder's message, from its first bytes, as the
    /// message itself names it; nothing for bytes that do not start a message.
    @Test func everyMessageIsCountedAsTheTypeItNames() throws {
        var session = Session(id: "s", epoch: "e", settings: KeyOrderTests.settings)
        guard case .success(let (pid, _)) = session.join(JoinRequest(name: "Ada", role: .owner), at: .zero) else {
            Issue.record("join")
            return
        }
        var messages = KeyOrderTests.events.map { ServerMessage.event(Emitted(event: $0, seq: 3)) }
        messages += [
            ServerMessage.ack(ref: .integer(1), seq: 1), ServerMessage.conflated(ref: .string("r"), seq: 1),
            ServerMessage.error(ref: .null, code: .notJoined, message: "no"),
            ServerMessage.welcome(ref: .integer(2), session: session, participant: pid, resumedFrom: nil, annotations: ServerMessage.annotationsJSON(session)),
            ServerMessage.live(session), ServerMessage.skipped(seq: 2), ServerMessage.overview([], connections: 0),
            ServerMessage.dragRefused(seq: 4, annotation: "pin", participant: "p2", holder: nil),
            ServerMessage.moved(ref: .integer(3), session: "s", reason: "handover"),
        ]
        var seen = Set<Int>()
        for message in messages {
            guard case .object(let fields)? = JSONValue.parse(message), case .string(let type)? = fields["type"] else {
                Issue.record("not a message: \(String(decoding: message, as: UTF8.self))")
                continue
            }
            let index = message.withUnsafeBytes { ServerMessage.typeIndex(of: $0) }
            #expect(index == ServerMessage.types.firstIndex(of: type), "\(type)")
            if let index { seen.insert(index) }
        }
        #expect(seen.count >= 20)
        #expect(Set(ServerMessage.types).count == ServerMessage.types.count)
        for bytes in [Array(#"{"type":"ack"#.utf8), Array(#"{"type":"nope","seq":1}"#.utf8), Array(#"{"seq":1,"type":"ack"}"#.utf8), []] {
            #expect(bytes.withUnsafeBytes { ServerMessage.typeIndex(of: $0) } == nil)
        }
    }
}
