import MeridianCore
import MeridianServer
import MeridianTesting
import Testing

@Suite("Per-connection rate limit", .serialized)
struct RateLimitTests {
    @Test func requestsBeyondTheBurstAreRefusedWithARetryHint() throws {
        // Five at once, then one a second: the join takes one token.
        let server = try TestServer { $0.rateLimit = RateLimit(perSecond: 1, burst: 5) }
        defer { server.stop() }
        let c = try server.joined("rl-1", name: "Flooder")
        for i in 0..<10 { c.send(.object(["type": .string("ping"), "ref": .string("f\(i)")])) }
        var answers: [JSONValue] = []
        while answers.count < 10 { answers.append(try c.next()) }
        #expect(answers.map { $0["ref"]?.string } == (0..<10).map { "f\($0)" }, "every request answered once, in order")
        #expect(answers.prefix(4).allSatisfy { $0["type"]?.string == "ack" })
        let refused = answers.filter { $0["code"]?.string == "rate_limited" }
        #expect(refused.count >= 5)
        #expect(refused.allSatisfy { ($0["retryAfterMs"]?.number ?? 0) >= 1 })
        #expect(refused.first?["message"]?.string?.contains("ping") == true)
    }

    @Test func aClientIgnoringRateLimitedRefusalsIsClosedWith4009() throws {
        // Every refusal counts towards the abuse limit (more than 100 in 10 s).
        let server = try TestServer { $0.rateLimit = RateLimit(perSecond: 1, burst: 5) }
        defer { server.stop() }
        let c = try server.joined("rl-3", name: "Flooder")
        for i in 0..<150 { c.send(.object(["type": .string("ping"), "ref": .string("f\(i)")])) }
        let closed = try c.waitFor { $0["type"]?.string == "$closed" }
        #expect(closed["code"]?.number == 4009)
    }

    @Test func transientRequestsAreConflatedAndTheLatestIsAppliedInOrder() throws {
        let server = try TestServer { $0.rateLimit = RateLimit(perSecond: 20, burst: 3) }
        defer { server.stop() }
        let mover = try server.joined("rl-2", name: "Mover")
        let watcher = try server.joined("rl-2", name: "Watcher", role: "viewer")
        _ = try mover.next("participant.joined")
        #expect(try mover.request("camera.begin")["type"]?.string == "ack")
        func camera(_ lat: Double) -> JSONValue { .object(["center": .coordinate(lat, 0), "zoom": .number(10)]) }
        for i in 1...30 {
            mover.send(.object(["type": .string("camera.changing"), "ref": .string("c\(i)"), "camera": camera(Double(i))]))
        }
        mover.send(.object(["type": .string("camera.end"), "ref": .string("end"), "camera": camera(30)]))
        // Every request is answered; replaced ones say so.
        var answers: [String: JSONValue] = [:]
        while answers.count < 31 {
            let m = try mover.next()
            if let ref = m["ref"]?.string { answers[ref] = m }
        }
        let conflated = answers.values.filter { $0["conflated"]?.bool == true }
        #expect(!conflated.isEmpty, "30 moves at once exceed a burst of 3")
        #expect(answers["c30"]?["type"]?.string == "ack" && answers["c30"]?["conflated"] == nil, "the latest move is applied")
        // camera.end is either admitted after the waiting move or refused to be retried; never ahead of it.
        let endAnswer = try #require(answers["end"])
        // The watcher sees the moves in order, ending with the latest one.
        var latitudes: [Double] = []
        while latitudes.last != 30 {
            let m = try watcher.next()
            if m["type"]?.string == "camera.changing", let lat = m["camera"]?["center"]?["latitude"]?.number { latitudes.append(lat) }
            #expect(m["type"]?.string != "camera.end", "camera.end overtook a waiting move")
        }
        #expect(latitudes == latitudes.sorted())
        if endAnswer["type"]?.string == "error" { #expect(endAnswer["code"]?.string == "rate_limited") }
    }
}
