import MeridianRedis
import Testing

@testable import MeridianServer

/// What only the memory broker can do: faults of one node while the others go on, and expiry
/// that follows the test's clock alone.
@Suite("Memory broker")
struct MemoryBrokerTests {
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
        let cut = broker.client(), other = broker.client()
        let heardCut = HeardEvents(), heardOther = HeardEvents(), lost = LostCount()
        let cutSubscriber = cut.subscriber { heardCut.record($0) }, otherSubscriber = other.subscriber { heardOther.record($0) }
        cutSubscriber.subscribe("s")
        otherSubscriber.subscribe("s")
        let cutPublisher = cut.publisher { count, _ in lost.add(count) }, otherPublisher = other.publisher { _, _ in }
        #expect(try cut.acquire("harbour", node: 1, ttl: .seconds(2)) == .granted(Lease(node: 1, fence: 1)))

        cut.cut()
        let error = #expect(throws: RedisError.self) { try cut.holders(["harbour"]) }
        #expect(error?.kind == .unreachable)
        #expect(try other.holders(["harbour"]) == ["harbour": Lease(node: 1, fence: 1)])
        cutPublisher.publish(Array("from the cut node".utf8), to: "s")
        otherPublisher.publish(Array("while cut".utf8), to: "s")
        broker.deliver()
        #expect(lost.value == 1)
        #expect(heardCut.all == ["connected", "disconnected"])
        #expect(heardOther.all == ["connected", "s:while cut"])

        cut.heal()
        otherPublisher.publish(Array("healed".utf8), to: "s")
        broker.deliver()
        #expect(heardCut.all == ["connected", "disconnected", "connected", "s:healed"])
        #expect(try cut.holders(["harbour"]) == ["harbour": Lease(node: 1, fence: 1)])
    }

    @Test func aStalledNodesMessagesWaitAndGoOnInOrderWhenHealed() throws {
        let broker = MemoryBroker()
        let stalled = broker.client(), other = broker.client()
        let heardStalled = HeardEvents(), heardOther = HeardEvents(), lost = LostCount()
        let stalledSubscriber = stalled.subscriber { heardStalled.record($0) }, otherSubscriber = other.subscriber { heardOther.record($0) }
        stalledSubscriber.subscribe("to-stalled")
        otherSubscriber.subscribe("to-other")
        let stalledPublisher = stalled.publisher { count, _ in lost.add(count) }, otherPublisher = other.publisher { _, _ in }
        broker.deliver()

        stalled.stall()
        #expect(throws: RedisError.self) { try stalled.register() }
        #expect(try other.register() == 1)
        for i in 0..<3 {
            stalledPublisher.publish(Array("out \(i)".utf8), to: "to-other")
            otherPublisher.publish(Array("in \(i)".utf8), to: "to-stalled")
        }
        broker.deliver()
        #expect(heardStalled.all == ["connected"])
        #expect(heardOther.all == ["connected"])

        stalled.heal()
        broker.deliver()
        #expect(lost.value == 0)
        #expect(heardStalled.all == ["connected", "to-stalled:in 0", "to-stalled:in 1", "to-stalled:in 2"])
        #expect(heardOther.all == ["connected", "to-other:out 0", "to-other:out 1", "to-other:out 2"])
        #expect(try stalled.register() == 2)
    }
}
