@testable import MeridianClient
import MeridianCore
@testable import MeridianServer
import MeridianTransport
import Testing

/// Several hubs joined by the relay, in memory: a session lives on its home hub and its members
/// are connected to every hub. Whatever hub a member is on, it must see what it would see with
/// one hub.
@Suite("Hubs joined by the relay, in memory")
struct InMemoryRelayTests {
    /// Random sessions on one hub (a server with one thread), and on four with the members spread
    /// over all of them.
    @Test(arguments: [1, 4], 1...10 as ClosedRange<UInt64>)
    func membersOnEveryHubSeeOneOrderAndConvergeOnTheSnapshot(hubCount: Int, seed: UInt64) throws {
        let hubs = try MemoryHubs(count: hubCount)
        var rng = SplitMix(seed: seed)
        let session = hubs.session(homedOn: Int(seed % UInt64(hubCount)), prefix: "relay-\(seed)")
        var members: [ConnectionID] = []
        var mirrors: [ConnectionID: SessionState] = [:]
        for (i, name) in ["Ann", "Ben", "Cy", "Dee", "Eli", "Fay"].enumerated() {
            let c = hubs.connect(to: i % hubCount)
            let welcome = try hubs.request("join", ["session": .string(session), "name": .string(name), "role": "editor"], from: c)
            mirrors[c] = SessionState(snapshot: try #require(welcome["snapshot"], "\(welcome)"))
            members.append(c)
        }
        var streams: [ConnectionID: [JSONValue]] = [:]
        for c in members { try SessionScript.apply(hubs.drain(c), to: &mirrors[c]!, stream: &streams[c, default: []]) }
        streams = [:]

        // Requests from several members go out before any answer comes back, so that they meet
        // at the home in an order the edges do not decide.
        var refs: [(ConnectionID, String)] = []
        for step in 0..<300 {
            let c = members[rng.below(members.count)]
            let (type, fields) = SessionScript.request(step: step, &rng)
            refs.append((c, hubs.post(type, fields, from: c)))
            if rng.below(4) == 0 { hubs.settle() }
        }
        for (c, ref) in refs { _ = try hubs.answer(ref, to: c) }
        for c in members { try SessionScript.apply(hubs.drain(c), to: &mirrors[c]!, stream: &streams[c, default: []]) }

        let reference = streams[members[0]]!
        #expect(reference.count > 50, "too few events to show anything: \(reference.count)")
        for c in members.dropFirst() {
            #expect(streams[c] == reference, "member on hub \(c.tag) saw another stream than the member on hub 0")
        }
        let late = hubs.connect(to: Int((seed + 1) % UInt64(hubCount)))
        let welcome = try hubs.request("join", ["session": .string(session), "name": "Gus", "role": "viewer"], from: late)
        let fresh = SessionState(snapshot: try #require(welcome["snapshot"]))
        for c in members {
            try SessionScript.apply(hubs.drain(c), to: &mirrors[c]!, stream: &streams[c, default: []])
            #expect(mirrors[c] == fresh, "the mirror of the member on hub \(c.tag) differs from a fresh snapshot (seed \(seed))")
        }
    }

    @Test func aDragRaceBetweenTwoEdgesIsDecidedAtTheHome() throws {
        let hubs = try MemoryHubs(count: 4)
        let session = hubs.session(homedOn: 0, prefix: "race")
        let owner = hubs.connect(to: 0), ann = hubs.connect(to: 1), ben = hubs.connect(to: 2)
        for (c, name) in [(owner, "Olga"), (ann, "Ann"), (ben, "Ben")] {
            try hubs.request("join", ["session": .string(session), "name": .string(name), "role": "editor"], from: c)
        }
        let point: JSONValue = ["type": "point", "id": "pin", "coordinate": ["latitude": 1, "longitude": 2], "draggable": true]
        try hubs.request("annotation.add", ["annotation": point], from: owner)
        // Both starts leave their edges before either reaches the home.
        let a = hubs.post("drag", ["id": "pin", "state": "starting"], from: ann)
        let b = hubs.post("drag", ["id": "pin", "state": "starting"], from: ben)
        let answers = [try hubs.answer(a, to: ann), try hubs.answer(b, to: ben)]
        #expect(answers.map { $0["type"]?.string ?? "" }.sorted() == ["ack", "error"], "\(answers)")
        let refusal = try #require(answers.first { $0["type"]?.string == "error" })
        #expect(refusal["code"]?.string == "drag_conflict", "\(refusal)")
        let winner = answers[0]["type"]?.string == "ack" ? ann : ben
        let events = hubs.drain(owner).filter { $0["type"]?.string == "drag" }
        #expect(events.count == 1 && events[0]["participant"] == refusal["holder"]?["id"], "\(events) \(refusal)")
        #expect(hubs.drain(winner == ann ? ben : ann).filter { $0["type"]?.string == "drag" } == events)
    }

    @Test func anEdgeForgetsRelayedMovesOnceTheyAreWritten() throws {
        let hubs = try MemoryHubs(count: 2)
        let session = hubs.session(homedOn: 0, prefix: "moves")
        let dragger = hubs.connect(to: 0), watcher = hubs.connect(to: 1)
        for (c, name) in [(dragger, "Dan"), (watcher, "Wes")] {
            try hubs.request("join", ["session": .string(session), "name": .string(name), "role": "editor"], from: c)
        }
        let point: JSONValue = ["type": "point", "id": "pin", "coordinate": ["latitude": 1, "longitude": 2], "draggable": true]
        try hubs.request("annotation.add", ["annotation": point], from: dragger)
        try hubs.request("drag", ["id": "pin", "state": "starting"], from: dragger)
        for step in 0..<20 {
            _ = hubs.post("drag", ["id": "pin", "state": "dragging", "coordinate": ["latitude": 1, "longitude": .number(2 + Double(step) / 100)]], from: dragger)
        }
        hubs.settle()
        #expect(hubs.drain(watcher).filter { $0["type"]?.string == "drag" }.count > 1)
        // The edge keeps the latest move of the kind, for the next one to supersede …
        #expect(hubs.hubs[1].inbox.transients.count == 1)
        // … until a tick finds it written: nothing is kept per move kind for ever.
        hubs.tick()
        #expect(hubs.hubs[1].inbox.transients.isEmpty)
    }

    @Test func requestsRightAfterALeaveFollowTheConnectionToItsNextSession() throws {
        let hubs = try MemoryHubs(count: 4)
        let first = hubs.session(homedOn: 2, prefix: "first"), second = hubs.session(homedOn: 3, prefix: "second")
        let c = hubs.connect(to: 1)
        // Join, leave, join elsewhere and add, without waiting for any answer: as with one hub,
        // each request is served in the session its connection is in when its turn comes.
        let refs = [
            hubs.post("join", ["session": .string(first), "name": "Ann", "role": "editor"], from: c),
            hubs.post("leave", from: c),
            hubs.post("join", ["session": .string(second), "name": "Ann", "role": "editor"], from: c),
            hubs.post("annotation.add", ["annotation": ["type": "point", "id": "x", "coordinate": ["latitude": 3, "longitude": 4]]], from: c),
        ]
        let answers = try refs.map { try hubs.answer($0, to: c) }
        #expect(answers.map { $0["type"]?.string } == ["welcome", "ack", "welcome", "ack"], "\(answers)")
        #expect(answers[2]["session"]?.string == second)
        let watcher = hubs.connect(to: 3)
        let welcome = try hubs.request("join", ["session": .string(second), "name": "Wes", "role": "viewer"], from: watcher)
        #expect(welcome["snapshot"]?["annotations"]?.arrayValue?.map { $0["id"]?.string } == ["x"], "\(welcome)")
        let firstNow = try hubs.request("join", ["session": .string(first), "name": "Fred", "role": "viewer"], from: hubs.connect(to: 0))
        #expect(firstNow["snapshot"]?["participants"]?.arrayValue?.map { $0["name"]?.string } == ["Fred"], "Ann is still in \(first): \(firstNow)")
    }

    @Test func aMemberThatDisconnectsFromItsEdgeLeavesAndResumesOnAnotherHub() throws {
        let hubs = try MemoryHubs(count: 3)
        let session = hubs.session(homedOn: 0, prefix: "resume")
        let stay = hubs.connect(to: 0), roam = hubs.connect(to: 1)
        try hubs.request("join", ["session": .string(session), "name": "Stay", "role": "editor"], from: stay)
        let welcome = try hubs.request("join", ["session": .string(session), "name": "Roam", "role": "editor"], from: roam)
        var mirror = SessionState(snapshot: try #require(welcome["snapshot"]))
        var stream: [JSONValue] = []
        try SessionScript.apply(hubs.drain(roam), to: &mirror, stream: &stream)

        hubs.disconnect(roam)
        let left = hubs.drain(stay).filter { $0["type"]?.string == "participant.left" }
        #expect(left.count == 1 && left[0]["participant"]?.string == welcome["participant"]?.string, "\(left)")
        for i in 0..<5 {
            try hubs.request("annotation.add", ["annotation": ["type": "point", "id": .string("p\(i)"), "coordinate": ["latitude": 1, "longitude": .number(Double(i))]]], from: stay)
        }
        let back = hubs.connect(to: 2)
        let resumed = try hubs.request("join", [
            "session": .string(session), "name": "Roam", "role": "editor",
            "resume": ["epoch": try #require(welcome["epoch"]), "seq": .number(Double(mirror.seq))],
        ], from: back)
        #expect(resumed["resumed"] == .bool(true), "\(resumed)")
        try SessionScript.apply(hubs.drain(back), to: &mirror, stream: &stream)
        let fresh = try hubs.request("join", ["session": .string(session), "name": "Zed", "role": "viewer"], from: hubs.connect(to: 1))
        try SessionScript.apply(hubs.drain(back), to: &mirror, stream: &stream)
        let expected = SessionState(snapshot: try #require(fresh["snapshot"]))
        #expect(mirror == expected, "the resumed mirror differs: \(mirror.annotations.keys.sorted()) vs \(expected.annotations.keys.sorted())")
    }
}

extension InMemoryRelayTests {
    @Test(arguments: 0..<4)
    func requestsBehindAWaitingJoinAreAnsweredInOrder(edge: Int) throws {
        let hubs = try MemoryHubs(count: 4)
        let s = hubs.session(homedOn: 1, prefix: "s"), t = hubs.session(homedOn: 2, prefix: "t")
        let c = hubs.connect(to: edge)
        let refs = [
            hubs.post("join", ["session": .string(s), "name": "Ann", "role": "editor"], from: c),
            hubs.post("join", ["session": .string(t), "name": "Ann", "role": "editor"], from: c),
            hubs.post("ping", from: c),
            hubs.post("annotation.add", ["annotation": ["type": "point", "id": "x", "coordinate": ["latitude": 3, "longitude": 4]]], from: c),
            hubs.post("leave", from: c),
        ]
        let answers = try refs.map { try hubs.answer($0, to: c) }
        #expect(answers.map { $0["type"]?.string } == ["welcome", "error", "ack", "ack", "ack"], "\(answers)")
        #expect(answers[1]["code"]?.string == "already_joined")
    }
}
