import MeridianCore
@testable import MeridianServer
import MeridianTransport
import Testing

/// The hub's logic driven through its outbound seam, without sockets, on a clock the test moves
/// (random sessions on one hub and on several: InMemoryRelayTests).
@Suite("Hub in memory")
struct InMemoryHubTests {
        @Test func anAbandonedDragIsEndedWhenItsLeaseRunsOutOnTheHubsClock() throws {
        let memory = try MemoryHubs(count: 1)
        let ann = memory.connect(to: 0), ben = memory.connect(to: 0)
        try memory.request("join", ["session": "lease", "name": "Ann", "role": "editor"], from: ann)
        try memory.request("join", ["session": "lease", "name": "Ben", "role": "editor"], from: ben)
        let point: JSONValue = ["type": "point", "id": "pin", "coordinate": ["latitude": 1, "longitude": 2], "draggable": true]
        #expect(try memory.request("annotation.add", ["annotation": point], from: ann)["type"]?.string == "ack")
        #expect(try memory.request("drag", ["id": "pin", "state": "starting"], from: ann)["type"]?.string == "ack")
        let refused = try memory.request("drag", ["id": "pin", "state": "starting"], from: ben)
        #expect(refused["code"]?.string == "drag_conflict", "\(refused)")
        _ = memory.drain(ben)

        memory.tick()
        let early = memory.drain(ben).filter { $0["type"]?.string == "drag" }
        #expect(early.isEmpty, "the lease ended before its time: \(early)")
        memory.outbounds[0].advance(by: .seconds(60))
        memory.tick()
        let ended = memory.drain(ben).filter { $0["type"]?.string == "drag" }
        #expect(ended.last?["state"]?.string == "none", "\(ended)")
        #expect(try memory.request("drag", ["id": "pin", "state": "starting"], from: ben)["type"]?.string == "ack")
    }

    @Test func aBadRequestIsRefusedByNameAndChangesNothing() throws {
        let memory = try MemoryHubs(count: 1)
        let ann = memory.connect(to: 0), ben = memory.connect(to: 0)
        try memory.request("join", ["session": "bad", "name": "Ann", "role": "editor"], from: ann)
        try memory.request("join", ["session": "bad", "name": "Ben", "role": "editor"], from: ben)
        _ = memory.drain(ben)
        let answer = try memory.request("annotation.add", ["annotation": ["type": "point", "id": "x", "coordinate": ["latitude": 91, "longitude": 0]]], from: ann)
        #expect(answer["type"]?.string == "error" && answer["code"]?.string == "invalid_field", "\(answer)")
        #expect(answer["field"]?.string?.contains("latitude") == true, "\(answer)")
        #expect(memory.drain(ben).isEmpty, "a refused request reached another member")
        #expect(memory.closeCode(of: ann) == nil)
        #expect(try memory.request("ping", from: ann)["type"]?.string == "ack")
    }
}
