import MeridianSync
import MeridianTransport
import Testing

@testable import MeridianServer

/// A message an owner sends another node's member in fragments (a large welcome) leaves the
/// owner whole, as one frame, once its last fragment is there: a message lost between nodes is
/// lost whole, and no client is ever sent part of one.
@Suite struct ClusterFragmentTests {
    static func fragment(_ text: String, first: Bool, last: Bool) -> OutboundFrame {
        let payload = Array(text.utf8)
        let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: OutboundFrame.headerRoom + payload.count)
        (buffer + OutboundFrame.headerRoom).initialize(from: payload, count: payload.count)
        return OutboundFrame(takingBuffer: buffer, count: OutboundFrame.headerRoom + payload.count, first: first, last: last)
    }

    @Test func aMessageInFragmentsLeavesTheOwnerWholeOnceItsLastFragmentIsHere() throws {
        let broker = MemoryBroker()
        let heard = Locked<[[UInt8]]>([])
        let subscriber = broker.client().subscriber { event in
            if case .message(_, let payload) = event { heard.withLock { $0.append(payload) } }
        }
        subscriber.subscribe(ClusterKeys.inbox(2))
        let publisher = broker.client().publisher { _, _ in }
        defer {
            subscriber.stop()
            publisher.stop()
        }
        let local = LocalRelay(hubs: 1)
        let owner = ClusterGateway(local: local, publisher: publisher)
        owner.assign(node: 1)
        // A member of node 2 joins a session of node 1: the gateway gives it an alias here.
        let member = RemoteConnection(node: 2, connection: ConnectionID(rawValue: 5))
        let join = Array(#"{"type":"join","ref":1,"session":"harbour","name":"A","role":"editor"}"#.utf8)
        owner.receive(ClusterWire.encode(.request(origin: member, peer: "127.0.0.1", grant: nil, text: join), from: 2))
        let alias = try #require(local.take(for: 0).compactMap { message -> ConnectionID? in
            if case .request(_, let from, _, _) = message { from } else { nil }
        }.first)

        let parts = [#"{"type":"welcome","ref":1,"#, #""snapshot":{"annotations":[]"#, "}}"]
        for (index, part) in parts.enumerated() {
            let frame = Self.fragment(part, first: index == 0, last: index == parts.count - 1)
            owner.post(.frame(RelayedFrame(frame: frame.relayable, token: nil, supersedes: nil), to: [alias], except: nil))
            broker.deliver()
            if index < parts.count - 1 { #expect(heard.withLock { $0 }.isEmpty, "part of a message left the owner") }
        }
        // Then a message of one frame, after it.
        owner.post(.frame(RelayedFrame(frame: OutboundFrame(text: #"{"type":"ping"}"#).relayable, token: nil, supersedes: nil),
                          to: [alias], except: nil))
        broker.deliver()

        let sent = heard.withLock { $0 }.compactMap { ClusterWire.decode($0)?.message }
        let frames = sent.compactMap { message -> (FrameBytes, [FrameTarget])? in
            guard case .frame(let wire, _, _, _, let targets) = message, let frame = FrameBytes(wire: wire) else { return nil }
            return (frame, targets)
        }
        #expect(sent.count == 2 && frames.count == 2, "\(sent)")
        #expect(frames.allSatisfy { $0.0.opcode == 1 && $0.0.isFinal && $0.1 == [FrameTarget(node: 2, members: [member.connection], skip: nil)] })
        #expect(frames.map { frame in String(decoding: frame.0.withPayload { Array($0) }, as: UTF8.self) } == [parts.joined(), #"{"type":"ping"}"#])
    }
}
