@testable import MeridianClient
import MeridianCore
@testable import MeridianServer
import MeridianTransport
import Testing

/// The hub's logic driven through its outbound seam, without sockets: random sessions check
/// ordering and convergence over many seeds in milliseconds, and the clock is the test's.
@Suite("Hub in memory")
struct InMemoryHubTests {
        @Test(arguments: 1...12)
    func everyMemberSeesOneOrderAndItsMirrorEqualsAFreshSnapshot(seed: UInt64) throws {
        let memory = try MemoryHubs(count: 1)
        var rng = SplitMix(seed: seed)
        let session = "mem-\(seed)"
        var members: [ConnectionID] = []
        var mirrors: [ConnectionID: SessionState] = [:]
        for name in ["Ann", "Ben", "Cy", "Dee"] {
            let c = memory.connect(to: 0)
            let welcome = try memory.request("join", ["session": .string(session), "name": .string(name), "role": .string("editor")], from: c)
            #expect(welcome["type"]?.string == "welcome", "\(welcome)")
            mirrors[c] = SessionState(snapshot: try #require(welcome["snapshot"]))
            members.append(c)
        }
        // Events before the last join reached only some members; from here on all see the same.
        var streams: [ConnectionID: [JSONValue]] = [:]
        for c in members { try SessionScript.apply(memory.drain(c), to: &mirrors[c]!, stream: &streams[c, default: []]) }
        streams = [:]

        var refused = 0
        for step in 0..<250 {
            let c = members[rng.below(members.count)]
            let (type, fields) = SessionScript.request(step: step, &rng)
            let answer = try memory.request(type, fields, from: c)
            if answer["type"]?.string == "error" { refused += 1 }
        }
        for c in members { try SessionScript.apply(memory.drain(c), to: &mirrors[c]!, stream: &streams[c, default: []]) }

        let reference = streams[members[0]]!
        #expect(reference.count > 50, "the run produced too few events to show anything: \(reference.count)")
        #expect(refused > 0 && refused < 250, "refused \(refused) of 250")
        for c in members.dropFirst() {
            #expect(streams[c] == reference, "member \(c) saw another stream than member \(members[0])")
        }

        let late = memory.connect(to: 0)
        let welcome = try memory.request("join", ["session": .string(session), "name": .string("Eve"), "role": .string("viewer")], from: late)
        let fresh = SessionState(snapshot: try #require(welcome["snapshot"]))
        for c in members {
            try SessionScript.apply(memory.drain(c), to: &mirrors[c]!, stream: &streams[c, default: []])
            #expect(mirrors[c] == fresh, "member \(c)'s mirror differs from a fresh snapshot (seed \(seed))")
        }
    }

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
