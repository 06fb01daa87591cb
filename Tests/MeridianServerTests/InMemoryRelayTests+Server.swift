@testable import MeridianClient
import MeridianCore
@testable import MeridianServer
import MeridianTransport
import Testing

/// What is the server's and not one hub's, with several hubs: the loaded-sessions limit, the
/// overview, and the word an edge waits for after a join or leave the home refused.
extension InMemoryRelayTests {
    /// The limit is the server's, so an idle session on any hub makes room: the home of the new
    /// session asks the other hubs in turn (its own idle sessions would go first).
    @Test(arguments: [2, 4])
    func anIdleSessionOnAnotherHubIsUnloadedToMakeRoom(hubCount: Int) throws {
        var configuration = ServerConfiguration()
        configuration.storage.maxLoadedSessions = 1
        let hubs = try MemoryHubs(count: hubCount, configuration: configuration)
        let first = hubs.session(homedOn: 0, prefix: "first"), second = hubs.session(homedOn: 1, prefix: "second")
        let ann = hubs.connect(to: 0), bob = hubs.connect(to: hubCount - 1)
        try hubs.request("join", ["session": .string(first), "name": "Ann", "role": "owner"], from: ann)

        let full = try hubs.request("join", ["session": .string(second), "name": "Bob", "role": "editor"], from: bob)
        #expect(full["type"]?.string == "error" && full["code"]?.string == "capacity_exceeded", "\(full)")

        let left = try hubs.request("leave", from: ann)
        #expect(left["type"]?.string == "ack", "\(left)")
        let welcome = try hubs.request("join", ["session": .string(second), "name": "Bob", "role": "editor"], from: bob)
        #expect(welcome["type"]?.string == "welcome", "\(welcome)")
        #expect(hubs.hubs[0].sessions[first] == nil, "the idle session was not unloaded")
        #expect(hubs.hubs[1].sessions[second] != nil)

        // Full again, with a member in the only session: refused.
        let cy = hubs.connect(to: 0)
        let refused = try hubs.request("join", ["session": .string(first), "name": "Cy", "role": "editor"], from: cy)
        #expect(refused["code"]?.string == "capacity_exceeded", "\(refused)")
    }

    /// A watcher on one hub sees every session of every hub in every overview (a session of
    /// another hub never drops out of one), with the rates its home measured.
    @Test func theOverviewListsEveryHubsSessionsWithTheirRates() throws {
        let hubs = try MemoryHubs(count: 2)
        let here = hubs.session(homedOn: 0, prefix: "here"), there = hubs.session(homedOn: 1, prefix: "there")
        let ann = hubs.connect(to: 0), bob = hubs.connect(to: 0), watcher = hubs.connect(to: 0)
        try hubs.request("join", ["session": .string(here), "name": "Ann", "role": "owner"], from: ann)
        try hubs.request("join", ["session": .string(there), "name": "Bob", "role": "owner"], from: bob)
        hubs.tick()
        try hubs.request("overview.watch", from: watcher)
        func overviews() -> [[String: Double]] {
            hubs.drain(watcher).filter { $0["type"]?.string == "overview" }.map { frame in
                var rates: [String: Double] = [:]
                for entry in frame["sessions"]?.arrayValue ?? [] {
                    rates[entry["session"]?.string ?? "?"] = entry["messagesPerSecond"]?.numberValue ?? -1
                }
                return rates
            }
        }
        #expect(overviews().map { Set($0.keys) } == [[here, there]])

        // A session opened on the other hub is in the next overview.
        let later = hubs.session(homedOn: 1, prefix: "later")
        try hubs.request("join", ["session": .string(later), "name": "Cy", "role": "owner"], from: hubs.connect(to: 1))
        hubs.tick()
        for i in 0..<10 {
            try hubs.request("camera.end", ["camera": ["center": ["latitude": 10, "longitude": .number(Double(i))], "zoom": 3]], from: bob)
        }
        for _ in 0..<3 {
            for outbound in hubs.outbounds { outbound.advance(by: .seconds(1)) }
            hubs.tick()
        }
        let sent = overviews()
        #expect(!sent.isEmpty && sent.allSatisfy { Set($0.keys) == [here, there, later] }, "\(sent)")
        // The rates of the other hub's interval with the requests.
        #expect(sent.contains { ($0[there] ?? 0) >= 9 }, "\(sent)")
        #expect(sent.allSatisfy { $0[here] == 0 }, "\(sent)")
    }

    /// A join or leave that the home refuses for the rate limit still tells the edge where the
    /// connection is: the requests held behind it go on.
    @Test func aRateLimitedJoinAtTheHomeReleasesTheRequestsHeldAtTheEdge() throws {
        var configuration = ServerConfiguration()
        configuration.rateLimit = RateLimit(perSecond: 0.001, burst: 2)
        let hubs = try MemoryHubs(count: 2, configuration: configuration)
        let session = hubs.session(homedOn: 1, prefix: "limited")
        let c = hubs.connect(to: 0)
        try hubs.request("join", ["session": .string(session), "name": "Ann", "role": "editor"], from: c)
        try hubs.request("leave", from: c)
        let join = hubs.post("join", ["session": .string(session), "name": "Ann", "role": "editor"], from: c)
        let ping = hubs.post("ping", from: c)
        let refused = try hubs.answer(join, to: c)
        #expect(refused["code"]?.string == "rate_limited", "\(refused)")
        let answer = try hubs.answer(ping, to: c)
        #expect(answer["type"]?.string == "ack", "\(answer)")
    }
}
