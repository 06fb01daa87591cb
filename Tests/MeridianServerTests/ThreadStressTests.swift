import Dispatch
@testable import MeridianClient
import MeridianCore
import MeridianTesting
import MeridianSync
import Testing

/// Eight service threads on this two-core machine: sessions whose members are connected to
/// every thread (the listener hands connections to the threads in turn), driven at once, with
/// leaves, rejoins and reconnections; afterwards every member's mirror equals a fresh snapshot.
@Suite("Eight service threads under load")
struct ThreadStressTests {
    static let threads = 8, sessions = 5, steps = 150

    @Test func membersOnEveryThreadConvergeAcrossConcurrentSessions() throws {
        let server = try TestServer {
            $0.threads = Self.threads
            $0.rateLimit = .unlimited
        }
        defer { server.stop() }
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: Self.sessions) { index in
            do {
                try Self.drive(session: "stress-\(index)", seed: UInt64(index + 1), on: server)
            } catch {
                failures.withLock { $0.append("stress-\(index): \(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
    }

    /// One session: members connected one after the other (so on every thread), random
    /// requests from each in turn, some leaving and joining again on a new connection; then a
    /// fresh joiner's snapshot against every member's mirror.
    private static func drive(session: String, seed: UInt64, on server: TestServer) throws {
        var rng = SplitMix(seed: seed)
        var members: [(client: TestClient, mirror: SessionState)] = []
        for i in 0..<threads {
            members.append(try join(session, name: "m\(i)", on: server))
        }
        for step in 0..<steps {
            let i = rng.below(members.count)
            if rng.below(25) == 0 {
                // Away and back on a new connection, which lands on another thread.
                if rng.below(2) == 0 { _ = try members[i].client.request("leave") }
                members[i].client.socket.close()
                members[i] = try join(session, name: "m\(i)-\(step)", on: server)
                continue
            }
            let (type, fields) = SessionScript.request(step: step, &rng)
            let answer = try members[i].client.request(type, fields)
            guard ["ack", "error"].contains(answer["type"]?.string ?? "") else {
                throw StressFailure("\(type) answered \(answer)")
            }
        }
        let late = try server.client()
        try late.join(session, name: "late", role: "viewer")
        let fresh = SessionState(snapshot: try #require(late.welcome["snapshot"]))
        for (client, mirror) in members {
            var mirror = mirror, stream: [JSONValue] = []
            while mirror.seq < fresh.seq {
                try SessionScript.apply([try client.next()], to: &mirror, stream: &stream)
            }
            guard mirror == fresh else { throw StressFailure("a member's mirror differs from a fresh snapshot at seq \(fresh.seq)") }
        }
    }

    private static func join(_ session: String, name: String, on server: TestServer) throws -> (client: TestClient, mirror: SessionState) {
        let client = try server.client()
        try client.join(session, name: name, role: "editor")
        return (client, SessionState(snapshot: try #require(client.welcome["snapshot"])))
    }
}

struct StressFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
