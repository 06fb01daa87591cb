import Foundation
import MeridianCore
import MeridianRedis
import MeridianStorage
import MeridianSync
import MeridianTesting
import Testing

@testable import MeridianClient
@testable import MeridianServer

/// Nodes of a cluster in this process: real servers on their own ports, one real Redis, and one
/// store they share (the in-memory store stands for PostgreSQL here; the PostgreSQL store has
/// tests of its own). Members of one session are connected to different nodes. The rules of
/// nodes that do not depend on Redis itself (failover, fencing, the overview) are tested in
/// memory (InMemoryClusterTests); these show them end to end, and what Redis does to them.
@Suite("Cluster nodes")
struct ClusterTests {
    let redis: RedisServerProcess
    let store = InMemorySessionStore()

    init() throws { redis = try RedisServerProcess() }

    /// A node that has joined the cluster (its /readyz answers 200): until then it refuses
    /// joins with `storage_unavailable`, as it should.
    func node(threads: Int = 1, advertise: String = "", store: (any SessionStore)? = nil) throws -> TestServer {
        let server = try TestServer { configuration in
            configuration.threads = threads
            configuration.rateLimit = .unlimited
            configuration.storage.store = store ?? self.store
            configuration.cluster = ClusterConfiguration(redis: RedisAddress(host: "127.0.0.1", port: redis.port), leaseTTL: .seconds(2), advertise: advertise)
        }
        let deadline = ContinuousClock.now + .seconds(20)
        var ready = false
        while !ready, ContinuousClock.now < deadline { ready = try HTTPConnection.call(port: server.port, "GET", "/readyz").status == 200 }
        if !ready { server.stop() }
        try #require(ready, "the node joined its cluster")
        return server
    }

    @Test func membersOnTwoNodesSeeEachOthersChangesInOneOrder() throws {
        let a = try node(), b = try node()
        defer { a.stop(); b.stop() }
        let first = try a.joined("harbour", name: "first")
        let second = try b.joined("harbour", name: "second")
        // The second joined through node b, served by node a, the session's owner.
        #expect(second.welcome["snapshot"]?["participants"]?.array?.count == 2)
        _ = try first.next("participant.joined")
        let added = try first.request("annotation.add", ["annotation": .point("pin", 52.5, 13.4)])
        #expect(added["type"]?.string == "ack")
        let seen = try second.next("annotation.added").message
        #expect(seen["annotation"]?["id"]?.string == "pin")
        let moved = try second.request("annotation.update", ["id": "pin", "changes": ["title": "Quay"]])
        #expect(moved["type"]?.string == "ack", "\(moved)")
        let update = try first.next("annotation.updated").message
        #expect(update["seq"] == moved["seq"])
        // A member joining at either node gets the same snapshot.
        let late = try b.joined("harbour", name: "late", role: "viewer")
        let lateAtA = try a.joined("harbour", name: "late-a", role: "viewer")
        #expect(late.welcome["snapshot"]?["annotations"] == lateAtA.welcome["snapshot"]?["annotations"])
        #expect(late.welcome["snapshot"]?["annotations"]?.array?.first?["title"]?.string == "Quay")
    }
}

extension ClusterTests {
    /// Redis goes away: every node stops serving sessions across nodes (members routed to
    /// another node are closed with 4012, an owner gives its leases up before they could pass to
    /// another node), joins are refused with `storage_unavailable` and /readyz says why; once
    /// Redis is back, joins work again and every acknowledged change is there.
    @Test func withoutRedisNodesRefuseAndRecoverWhenItReturns() throws {
        let a = try node(), b = try node()
        defer { a.stop(); b.stop() }
        let first = try a.joined("harbour", name: "first")
        let second = try b.joined("harbour", name: "second")
        #expect(try first.request("annotation.add", ["annotation": .point("pin", 52.5, 13.4)])["type"]?.string == "ack")
        #expect(try HTTPConnection.call(port: a.port, "GET", "/readyz").status == 200)
        redis.stop()
        #expect(try second.next("$closed", timeout: .seconds(10)).message["code"]?.number == 4012)
        #expect(try first.next("$closed", timeout: .seconds(10)).message["code"]?.number == 4012)
        let deadline = ContinuousClock.now + .seconds(10)
        var ready = try HTTPConnection.call(port: a.port, "GET", "/readyz")
        while ready.status != 503, ContinuousClock.now < deadline { ready = try HTTPConnection.call(port: a.port, "GET", "/readyz") }
        #expect(ready.status == 503)
        #expect(ready.json?["reason"]?.string?.contains("redis://127.0.0.1:\(redis.port)") == true)
        let refused = try a.client()
        let answer = try refused.request("join", ["session": "harbour", "name": "third", "role": "editor"])
        #expect(answer["code"]?.string == "storage_unavailable", "\(answer)")
        try redis.start()
        while try HTTPConnection.call(port: b.port, "GET", "/readyz").status != 200, ContinuousClock.now < deadline + .seconds(10) {}
        let back = try b.joined("harbour", name: "back")
        #expect(back.welcome["snapshot"]?["annotations"]?.array?.map { $0["id"]?.string } == ["pin"])
    }
}

extension ClusterTests {
    /// Redis keeps no fencing counter across a restart without persistence: the next owner's
    /// lease is moved past the fence of the session's last stored write, and its writes are taken.
    @Test func aNewOwnerAfterRedisLostItsCountersStillWrites() throws {
        let a = try node()
        let first = try a.joined("harbour", name: "first")
        #expect(try first.request("annotation.add", ["annotation": .point("before", 52.5, 13.4)])["type"]?.string == "ack")
        a.stop()
        redis.stop()
        try redis.start()
        let b = try node()
        defer { b.stop() }
        let second = try b.joined("harbour", name: "second")
        #expect(second.welcome["snapshot"]?["annotations"]?.array?.map { $0["id"]?.string } == ["before"])
        let answer = try second.request("annotation.add", ["annotation": .point("after", 52.6, 13.5)])
        #expect(answer["type"]?.string == "ack", "\(answer)")
        #expect(try store.load("harbour")?.fence == 2)
    }
}

extension ClusterTests {
    /// The owner stops: members on the other node that asked for handover stay connected. A raw
    /// client is told `moved`, then gets the new epoch's snapshot with its join's ref, and writes
    /// on; the Swift client (which always asks) reports a 4012 and a welcome without reconnecting.
    @Test func whenTheOwnerStopsMembersElsewhereAreMovedInPlace() throws {
        let a = try node(), b = try node()
        defer { b.stop() }
        let first = try a.joined("harbour", name: "first")
        let second = try b.client()
        let joined = try second.request("join", ["session": "harbour", "name": "second", "role": "editor", "handover": true])
        let epoch = try #require(joined["epoch"]?.string, "\(joined)")
        let updates = Locked<[ClientUpdate]>([])
        let sawWelcome = DispatchSemaphore(value: 0)
        let app = MeridianClient(port: b.port, configuration: ClientConfiguration(session: "harbour", name: "app"))
        defer { app.close() }
        // Signalled by the welcome that follows the move (not by the first join's).
        app.observe { update in
            let moved = updates.withLock { $0.append(update); return $0.contains(.didDisconnect(code: 4012)) }
            if case .didConnect = update, moved { sawWelcome.signal() }
        }
        #expect(try app.connect().epoch == epoch)
        #expect(try first.request("annotation.add", ["annotation": .point("pin", 52.5, 13.4)])["type"]?.string == "ack")

        a.stop()
        let (moved, before) = try second.next("moved", timeout: .seconds(15))
        #expect(!before.contains { $0["type"]?.string == "$closed" })
        #expect(moved["ref"] == joined["ref"] && moved["session"]?.string == "harbour", "\(moved)")
        let welcome = try second.next("welcome", timeout: .seconds(15)).message
        #expect(welcome["ref"] == joined["ref"])
        #expect(welcome["epoch"]?.string != epoch)
        #expect(welcome["snapshot"]?["annotations"]?.array?.map { $0["id"]?.string } == ["pin"])
        #expect(try second.request("annotation.add", ["annotation": .point("quay", 52.5, 13.4)])["type"]?.string == "ack")

        #expect(sawWelcome.wait(timeout: .now() + 15) == .success, "the Swift client was not joined again")
        let seen = updates.withLock { $0 }
        #expect(seen.contains(.didDisconnect(code: 4012)))
        #expect(app.welcome?.epoch == welcome["epoch"]?.string)
        // Both were moved on their connections: none reconnected.
        let metrics = try HTTPConnection.call(port: b.port, "GET", "/metrics").text
        #expect(metrics.contains("meridian_cluster_handovers_total 2"), "\(metrics.split(separator: "\n").filter { $0.contains("handover") })")
    }

    /// The owner stops and the node that takes the session over cannot load it: the Swift
    /// client's join, sent again in place, is refused. The client then drops the connection and
    /// joins again with backoff, as after a close, until the store answers.
    @Test func aSwiftClientWhoseJoinInPlaceIsRefusedJoinsAgainWithBackoff() throws {
        let claims = ClaimFailingStore()
        let a = try node(store: claims), b = try node(store: claims)
        defer { b.stop() }
        let first = try a.joined("harbour", name: "first")
        let updates = Locked<[ClientUpdate]>([])
        let dropped = DispatchSemaphore(value: 0), joined = DispatchSemaphore(value: 0)
        let app = MeridianClient(port: b.port, configuration: ClientConfiguration(
            session: "harbour", name: "app", reconnect: ReconnectPolicy(initialDelay: .milliseconds(50), maxDelay: .milliseconds(200))))
        defer { app.close() }
        app.observe { update in
            updates.withLock { $0.append(update) }
            switch update {
            case .didDisconnect(code: nil): dropped.signal()
            case .didConnect: joined.signal()
            default: break
            }
        }
        let epoch = try app.connect().epoch
        #expect(joined.wait(timeout: .now() + 5) == .success)
        #expect(try first.request("annotation.add", ["annotation": .point("pin", 52.5, 13.4)])["type"]?.string == "ack")

        claims.failClaims(true)
        a.stop()
        // Told it moved (4012, connection open), then its join refused: the connection is dropped.
        #expect(dropped.wait(timeout: .now() + 20) == .success, "\(updates.withLock { $0 })")
        let seen = updates.withLock { $0 }
        let moved = try #require(seen.firstIndex(of: .didDisconnect(code: 4012)), "\(seen)")
        #expect(seen.firstIndex(of: .didDisconnect(code: nil)).map { $0 > moved } == true, "\(seen)")
        #expect(!seen[moved...].contains { if case .didConnect = $0 { true } else { false } }, "joined while the store refused: \(seen)")
        #expect(claims.failedClaims >= 1)

        claims.failClaims(false)
        #expect(joined.wait(timeout: .now() + 20) == .success, "\(updates.withLock { $0 })")
        let welcome = try #require(app.welcome)
        #expect(welcome.epoch != epoch)
        #expect(app.state?.annotations["pin"] != nil)
        #expect(!updates.withLock { $0 }.contains(.didClose))
        // Moved in place once; the join after the refusal came on a new connection.
        let metrics = try HTTPConnection.call(port: b.port, "GET", "/metrics").text
        #expect(metrics.contains("meridian_cluster_handovers_total 1"), "\(metrics.split(separator: "\n").filter { $0.contains("handover") })")
    }
}
