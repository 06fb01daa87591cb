import MeridianCore
@testable import MeridianServer
import Testing

/// The per-connection rate limit as members see it, on one hub in memory with a clock the test
/// moves (the rules themselves: ConnectionStateTests; the wire: the Python abuse tests).
@Suite("Per-connection rate limit")
struct RateLimitTests {
    static func hubs(perSecond: Double, burst: Int) throws -> MemoryHubs {
        var configuration = ServerConfiguration()
        configuration.rateLimit = RateLimit(perSecond: perSecond, burst: burst)
        return try MemoryHubs(count: 1, configuration: configuration)
    }

    @Test func requestsBeyondTheBurstAreRefusedWithARetryHintAndEveryOneIsAnsweredInOrder() throws {
        // Five at once, then one a second: the join takes one token.
        let memory = try Self.hubs(perSecond: 1, burst: 5)
        let c = memory.connect(to: 0)
        try memory.request("join", ["session": "rl-1", "name": "Flooder", "role": "editor"], from: c)
        let refs = (0..<10).map { _ in memory.post("ping", from: c) }
        let answers = memory.drain(c)
        #expect(answers.map { $0["ref"]?.string } == refs, "every request answered once, in order")
        #expect(answers.prefix(4).allSatisfy { $0["type"]?.string == "ack" })
        let refused = answers.dropFirst(4)
        #expect(refused.allSatisfy { $0["code"]?.string == "rate_limited" && ($0["retryAfterMs"]?.number ?? 0) >= 1 }, "\(refused)")
        #expect(refused.first?["message"]?.string?.hasPrefix("ping: over 1 requests/s (burst 5)") == true)
        // A second later there is a token again.
        memory.outbounds[0].advance(by: .seconds(1))
        #expect(try memory.request("ping", from: c)["type"]?.string == "ack")
    }

    @Test func aClientIgnoringRateLimitedRefusalsIsClosedWith4009() throws {
        // Every refusal counts towards the abuse limit (more than 100 in 10 s).
        let memory = try Self.hubs(perSecond: 1, burst: 5)
        let c = memory.connect(to: 0)
        try memory.request("join", ["session": "rl-3", "name": "Flooder", "role": "editor"], from: c)
        for _ in 0..<104 { memory.post("ping", from: c) }
        #expect(memory.closeCode(of: c) == nil, "100 refusals are tolerated")
        memory.post("ping", from: c)
        #expect(memory.closeCode(of: c) == 4009)
    }

    @Test func transientRequestsAreConflatedAndTheLatestIsAppliedInOrder() throws {
        let memory = try Self.hubs(perSecond: 20, burst: 3)
        let mover = memory.connect(to: 0), watcher = memory.connect(to: 0)
        try memory.request("join", ["session": "rl-2", "name": "Mover", "role": "editor"], from: mover)
        try memory.request("join", ["session": "rl-2", "name": "Watcher", "role": "viewer"], from: watcher)
        #expect(try memory.request("camera.begin", from: mover)["type"]?.string == "ack")
        _ = memory.drain(watcher)
        func camera(_ lat: Double) -> JSONValue { .object(["center": .coordinate(lat, 0), "zoom": .number(10)]) }
        // The join and camera.begin took two of three tokens: the first move is applied, the
        // others wait for the next token, each replacing the one before.
        let moves = (1...30).map { memory.post("camera.changing", ["camera": camera(Double($0))], from: mover) }
        let end = memory.post("camera.end", ["camera": camera(30)], from: mover)
        var answers = Dictionary(uniqueKeysWithValues: memory.drain(mover).compactMap { m in m["ref"]?.string.map { ($0, m) } })
        #expect(answers[moves[0]]?["type"]?.string == "ack")
        #expect(moves[1..<29].allSatisfy { answers[$0]?["conflated"]?.bool == true }, "\(answers)")
        #expect(answers[moves[29]] == nil, "the latest move waits for a token")
        #expect(answers[end]?["code"]?.string == "rate_limited", "camera.end never overtakes a waiting move")
        memory.outbounds[0].advance(by: .milliseconds(50))
        memory.tick()
        answers = Dictionary(uniqueKeysWithValues: memory.drain(mover).compactMap { m in m["ref"]?.string.map { ($0, m) } })
        #expect(answers[moves[29]]?["type"]?.string == "ack" && answers[moves[29]]?["conflated"] == nil, "the latest move is applied")
        let latitudes = memory.drain(watcher).filter { $0["type"]?.string == "camera.changing" }.compactMap { $0["camera"]?["center"]?["latitude"]?.number }
        #expect(latitudes == [1, 30])
    }
}
