import Dispatch
@testable import MeridianClient
import MeridianCore
import MeridianRedis
import MeridianStorage
import MeridianSync
import MeridianTesting
import Testing

@testable import MeridianServer

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
                try StressDriver.drive(session: "stress-\(index)", seed: UInt64(index + 1), members: Self.threads, steps: Self.steps, on: [server])
            } catch {
                failures.withLock { $0.append("stress-\(index): \(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
    }
}

/// Three cluster nodes of two service threads each, one Redis: sessions whose members join at
/// every node in turn (so on every node and thread), driven at once with random requests,
/// leaves, rejoins and reconnections; afterwards every member's mirror equals a fresh snapshot
/// taken at any node, and each session's broadcasts went once on its channel for the nodes
/// that hear it.
@Suite("Cluster nodes under load")
struct ClusterStressTests {
    static let nodes = 3, sessions = 4, members = 6, steps = 120

    @Test func membersOnEveryNodeConvergeAcrossConcurrentSessions() throws {
        let redis = try RedisServerProcess()
        let store = InMemorySessionStore()
        let servers = try (0..<Self.nodes).map { _ in
            try TestServer { configuration in
                configuration.threads = 2
                configuration.rateLimit = .unlimited
                configuration.storage.store = store
                configuration.cluster = ClusterConfiguration(redis: RedisAddress(host: "127.0.0.1", port: redis.port))
            }
        }
        defer { for server in servers { server.stop() } }
        // What goes on the sessions' channels, heard as any node hears it.
        let heard = Locked<[(sender: Int, nodes: Set<Int>)]>([])
        let listener = RedisSubscriber(address: RedisAddress(host: "127.0.0.1", port: redis.port)) { event in
            guard case .message(_, let payload) = event, let (sender, message) = ClusterWire.decode(payload),
                  case .frame(_, _, _, _, let targets) = message else { return }
            heard.withLock { $0.append((sender, Set(targets.map(\.node)))) }
        }
        defer { listener.stop() }
        for index in 0..<Self.sessions {
            listener.subscribe(ClusterKeys.channel("cluster-\(index)"))
            listener.waitUntilSubscribed(ClusterKeys.channel("cluster-\(index)"))
        }
        let failures = Locked<[String]>([])
        DispatchQueue.concurrentPerform(iterations: Self.sessions) { index in
            do {
                try StressDriver.drive(session: "cluster-\(index)", seed: UInt64(index + 11), members: Self.members, steps: Self.steps, on: servers)
            } catch {
                failures.withLock { $0.append("cluster-\(index): \(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        // Broadcasts to members of several other nodes went once, on the session's channel,
        // with a target for each node (never the owner itself).
        let frames = heard.withLock { $0 }
        #expect(frames.contains { $0.nodes.count >= 2 })
        #expect(frames.allSatisfy { !$0.nodes.contains($0.sender) && !$0.nodes.isEmpty })
    }
}

/// Drives sessions of a server, or of the nodes of a cluster, from many members at once.
enum StressDriver {
    /// One session: `members` connected one after the other, to each server in turn (the
    /// listener hands a server's connections to its threads in turn), random requests from
    /// each, some leaving and joining again on a new connection at any server; then a fresh
    /// hidden joiner's snapshot at every server against every member's mirror.
    static func drive(session: String, seed: UInt64, members count: Int, steps: Int, on servers: [TestServer]) throws {
        var rng = SplitMix(seed: seed)
        var members: [(client: TestClient, mirror: SessionState)] = []
        for i in 0..<count {
            members.append(try join(session, name: "m\(i)", on: servers[i % servers.count]))
        }
        for step in 0..<steps {
            let i = rng.below(members.count)
            if rng.below(25) == 0 {
                // Away and back on a new connection, on another thread or node.
                if rng.below(2) == 0 { _ = try members[i].client.request("leave") }
                members[i].client.socket.close()
                members[i] = try join(session, name: "m\(i)-\(step)", on: servers[rng.below(servers.count)])
                continue
            }
            let (type, fields) = SessionScript.request(step: step, &rng)
            let answer = try members[i].client.request(type, fields)
            guard ["ack", "error"].contains(answer["type"]?.string ?? "") else {
                throw StressFailure("\(type) answered \(answer)")
            }
        }
        for server in servers {
            let late = try server.client()
            try late.join(session, name: "late", role: "viewer", extra: ["hidden": true])
            let fresh = SessionState(snapshot: try #require(late.welcome["snapshot"]))
            for (index, member) in members.enumerated() {
                var mirror = member.mirror, stream: [JSONValue] = []
                while mirror.seq < fresh.seq {
                    try SessionScript.apply([try member.client.next()], to: &mirror, stream: &stream)
                }
                guard mirror == fresh else { throw StressFailure("member \(index)'s mirror differs from a fresh snapshot at seq \(fresh.seq)") }
                members[index].mirror = mirror
            }
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
