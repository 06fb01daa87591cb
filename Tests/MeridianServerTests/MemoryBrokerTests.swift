import MeridianTesting
import Testing

@testable import MeridianServer

/// What only the memory broker can do: faults of one node while the others go on, and expiry
/// that follows the test's clock alone.
@Suite("Memory broker")
struct MemoryBrokerTests {
    /// A node's client of the broker, with a subscriber to one channel and a publisher, and what
    /// they heard and lost.
    struct Node {
        let client: MemoryBroker.Client
        let heard = HeardEvents(), lost = LostCount()
        let subscriber: any ChannelSubscriber, publisher: any ChannelPublisher

        init(_ broker: MemoryBroker, hearing channel: String) {
            client = broker.client()
            let (heard, lost) = (self.heard, self.lost)
            subscriber = client.subscriber { heard.record($0) }
            subscriber.subscribe(channel)
            publisher = client.publisher { count, _ in lost.add(count) }
        }
    }

    @Test func leasesExpireOnTheBrokersClockOnly() throws {
        let broker = MemoryBroker()
        let a = SessionLeases(store: broker.client(), node: 1, ttl: .seconds(2))
        let b = SessionLeases(store: broker.client(), node: 2, ttl: .seconds(2))
        #expect(try a.acquire("harbour") == .granted(Lease(node: 1, fence: 1)))
        broker.advance(by: .milliseconds(1_500))
        #expect(try b.acquire("harbour") == .held(Lease(node: 1, fence: 1), remaining: .milliseconds(500)))
        broker.advance(by: .milliseconds(499))
        #expect(try b.holders(["harbour"]) == ["harbour": Lease(node: 1, fence: 1)])
        broker.advance(by: .milliseconds(1))
        #expect(try b.acquire("harbour") == .granted(Lease(node: 2, fence: 2)))
    }

    @Test func aNodeCutOffFailsAloneLosesItsMessagesAndIsSubscribedAgainWhenHealed() throws {
        let broker = MemoryBroker()
        let cut = Node(broker, hearing: "s"), other = Node(broker, hearing: "s")
        #expect(try cut.client.acquire("harbour", node: 1, ttl: .seconds(2)) == .granted(Lease(node: 1, fence: 1)))

        cut.client.cut()
        let error = #expect(throws: BrokerError.self) { try cut.client.holders(["harbour"]) }
        #expect(error?.kind == .unreachable)
        #expect(try other.client.holders(["harbour"]) == ["harbour": Lease(node: 1, fence: 1)])
        cut.publisher.publish(Array("from the cut node".utf8), to: "s")
        other.publisher.publish(Array("while cut".utf8), to: "s")
        broker.deliver()
        #expect(cut.lost.value == 1)
        #expect(cut.heard.all == ["connected", "disconnected"])
        #expect(other.heard.all == ["connected", "s:while cut"])

        cut.client.heal()
        other.publisher.publish(Array("healed".utf8), to: "s")
        broker.deliver()
        #expect(cut.heard.all == ["connected", "disconnected", "connected", "s:healed"])
        #expect(try cut.client.holders(["harbour"]) == ["harbour": Lease(node: 1, fence: 1)])
    }

    @Test func aStalledNodesMessagesWaitAndGoOnInOrderWhenHealed() throws {
        let broker = MemoryBroker()
        let stalled = Node(broker, hearing: "to-stalled"), other = Node(broker, hearing: "to-other")
        broker.deliver()

        stalled.client.stall()
        #expect(throws: BrokerError.self) { try stalled.client.register() }
        #expect(try other.client.register() == 1)
        for i in 0..<3 {
            stalled.publisher.publish(Array("out \(i)".utf8), to: "to-other")
            other.publisher.publish(Array("in \(i)".utf8), to: "to-stalled")
        }
        broker.deliver()
        #expect(stalled.heard.all == ["connected"])
        #expect(other.heard.all == ["connected"])

        stalled.client.heal()
        broker.deliver()
        #expect(stalled.lost.value == 0)
        #expect(stalled.heard.all == ["connected", "to-stalled:in 0", "to-stalled:in 1", "to-stalled:in 2"])
        #expect(other.heard.all == ["connected", "to-other:out 0", "to-other:out 1", "to-other:out 2"])
        #expect(try stalled.client.register() == 2)
    }
}
