import Foundation
import MeridianAuth
import MeridianCore
import MeridianServer
import MeridianStorage
import MeridianTesting
import Testing

/// Nothing blocks the service thread: sessions load on reader threads, the HTTP API is
/// answered after its commit without the loop waiting for it. Real sockets, real SQLite; the
/// only stand-ins are stores that make one load slow or hold commits.
@Suite("Nothing blocks the service thread", .serialized)
struct OffThreadTests {
    /// A server on `store`, without a rate limit (the loops below send as fast as answered).
    func server(_ store: any SessionStore, _ configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> TestServer {
        try TestServer {
            $0.storage.store = store
            $0.rateLimit = .unlimited
            configure(&$0)
        }
    }

    /// Runs `body` with a server on a fresh store whose commits can be held, releasing any held
    /// commit before the server stops (a held commit would keep it from stopping).
    func withHeldCommits(_ body: (HeldCommitStore, TestServer) throws -> Void) throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try HeldCommitStore(directory: dir)
        let server = try server(store)
        defer { server.stop() }
        defer { store.release() }
        try body(store, server)
    }

    func join(_ session: String, name: String, ref: Int = 1) -> JSONValue {
        .object(["type": .string("join"), "ref": .number(Double(ref)), "session": .string(session),
                 "name": .string(name), "role": .string("editor")])
    }

    @Test func whileOneSessionTakes500msToLoadPingsAndDragsElsewhereAreNotDelayed() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SlowLoadStore(directory: dir, slowID: "big", delay: 0.5)
        let server = try server(store)
        defer { server.stop() }
        let alice = try server.joined("busy", name: "Alice")
        let bob = try server.joined("busy", name: "Bob")
        #expect(try alice.request("annotation.add", ["annotation": .point("pin", 1, 1)])["type"]?.string == "ack")
        #expect(try alice.request("drag", ["id": .string("pin"), "state": .string("starting")])["type"]?.string == "ack")

        let carol = try server.client()
        let joinSent = ContinuousClock.now
        carol.send(join("big", name: "Carol"))
        #expect(store.loadStarted.wait())

        // Round trips in "busy" for as long as the load of "big" lasts.
        var pings: [Duration] = [], moves: [Duration] = [], seen: [Duration] = []
        var n = 0
        while !store.loadEnded.happened {
            n += 1
            var start = ContinuousClock.now
            #expect(try alice.request("ping")["type"]?.string == "ack")
            pings.append(.now - start)
            start = .now
            let latitude = 1 + Double(n) / 1_000
            #expect(try alice.request("drag", ["id": .string("pin"), "state": .string("dragging"),
                                               "coordinate": .coordinate(latitude, 1)])["type"]?.string == "ack")
            moves.append(.now - start)
            _ = try bob.waitFor { $0["type"]?.string == "drag" && $0["coordinate"]?["latitude"]?.number == latitude }
            seen.append(.now - start)
        }
        let welcome = try carol.next("welcome", timeout: .seconds(10)).message
        let joinTook = ContinuousClock.now - joinSent
        #expect(welcome["ref"]?.number == 1)
        #expect(joinTook >= .milliseconds(500), "the join is answered once the session is loaded")

        let p99 = { (samples: [Duration]) in samples.sorted()[min(samples.count - 1, samples.count * 99 / 100)] }
        print("during a 500 ms load: \(pings.count) pings p99 \(p99(pings)) max \(pings.max()!); drag acks p99 \(p99(moves)); drag seen by another p99 \(p99(seen)); join answered after \(joinTook)")
        // A blocked loop would hold the first round trip for the whole load (about 500 ms).
        #expect(pings.count >= 10, "round trips during the load: \(pings.count)")
        let bound = .milliseconds(100) * testSlowdown
        #expect(p99(pings) < bound)
        #expect(p99(moves) < bound)
        #expect(p99(seen) < bound)
    }

    @Test func requestsSentBehindAWaitingJoinAreAnsweredAfterItInOrder() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SlowLoadStore(directory: dir, slowID: "s", delay: 0.3)
        let server = try server(store)
        defer { server.stop() }
        let alice = try server.client()
        alice.send(join("s", name: "Alice", ref: 1))
        alice.send(join("t", name: "Alice", ref: 2))
        alice.send(.object(["type": .string("ping"), "ref": .number(3)]))
        alice.send(.object(["type": .string("annotation.add"), "ref": .number(4), "annotation": .point("pin", 1, 1)]))
        alice.send(.object(["type": .string("leave"), "ref": .number(5)]))
        let answers = try (0..<6).map { _ in try alice.next() }
        #expect(answers.map { $0["type"]?.string ?? "?" } == ["welcome", "error", "ack", "annotation.added", "ack", "ack"])
        #expect(answers.compactMap { $0["ref"]?.number } == [1, 2, 3, 4, 5])
        #expect(answers[1]["code"]?.string == "already_joined")
        #expect(answers[2]["seq"]?.number == 1, "the ping is answered in the joined session")
    }

    @Test func everyJoinWaitingForALoadGetsItAndOneThatLeftIsNotJoined() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SlowLoadStore(directory: dir, slowID: "s", delay: 0.5)
        let server = try server(store)
        defer { server.stop() }
        do {
            let gone = try server.client()
            gone.send(join("s", name: "Gone"))
            #expect(store.loadStarted.wait())
        }  // closed while its join waits
        let bob = try server.client()
        let carol = try server.client()
        bob.send(join("s", name: "Bob"))
        carol.send(join("s", name: "Carol"))
        let bobWelcome = try bob.next("welcome").message
        let carolWelcome = try carol.next("welcome").message
        #expect(store.loads == 1, "joins of a loading session wait for the same load")
        // Whichever join the server took first, the connection that left is in neither.
        let listed = [bobWelcome, carolWelcome].map { Set($0["snapshot"]?["participants"]?.array?.compactMap { $0["name"]?.string } ?? []) }
        #expect(listed.sorted { $0.count < $1.count } == [["Bob"], ["Bob", "Carol"]] || listed.sorted { $0.count < $1.count } == [["Carol"], ["Bob", "Carol"]])
    }

    @Test func theSameParticipantJoiningTwiceWhileTheSessionLoadsKeepsTheNewerConnection() async throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SlowLoadStore(directory: dir, slowID: "auth-slow", delay: 0.5)
        let server = try await tokenServer {
            $0.storage.store = store
            $0.rateLimit = .unlimited
        }
        defer { server.stop() }
        let jwt = try await token("alice", role: .editor)
        let older = try TestClient(port: server.port)
        let newer = try TestClient(port: server.port)
        older.send(.object(["type": .string("join"), "ref": .number(1), "session": .string("auth-slow"), "token": .string(jwt)]))
        #expect(store.loadStarted.wait())
        newer.send(.object(["type": .string("join"), "ref": .number(1), "session": .string("auth-slow"), "token": .string(jwt)]))
        #expect(try newer.next("welcome").message["participant"]?.string == "alice")
        // The older join was answered first, then its connection closed as replaced (a welcome
        // not yet written when it closed is discarded with the rest of its queue).
        let closed = try older.waitFor { $0["type"]?.string != "welcome" }
        #expect(closed["type"]?.string == "$closed")
        #expect(closed["code"]?.number == 4010)
        #expect(try newer.request("ping")["type"]?.string == "ack")
    }

    @Test func aFailedLoadRefusesEveryWaitingJoinAndTheNextJoinTriesAgain() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SlowLoadStore(directory: dir, slowID: "broken", delay: 0.5, failing: true)
        let server = try server(store)
        defer { server.stop() }
        let alice = try server.client()
        let bob = try server.client()
        alice.send(join("broken", name: "Alice"))
        #expect(store.loadStarted.wait())
        bob.send(join("broken", name: "Bob"))
        for client in [alice, bob] {
            let refused = try client.next()
            #expect(refused["type"]?.string == "error")
            #expect(refused["code"]?.string == "storage_unavailable")
            #expect(refused["message"]?.string?.contains("disk I/O error (test)") == true)
        }
        #expect(try alice.request("join", ["session": .string("broken"), "name": .string("Alice"), "role": .string("editor")])["code"]?.string
            == "storage_unavailable")
        #expect(store.loads == 2)
        try alice.join("fine", name: "Alice", role: "editor")
    }

    @Test func loadsInFlightCountTowardsTheSessionLimit() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SlowLoadStore(directory: dir, slowID: "s", delay: 0.5)
        let server = try server(store) { $0.storage.maxLoadedSessions = 1 }
        defer { server.stop() }
        let alice = try server.client()
        alice.send(join("s", name: "Alice"))
        #expect(store.loadStarted.wait())
        let bob = try server.client()
        let refused = try bob.request("join", ["session": .string("t"), "name": .string("Bob"), "role": .string("editor")])
        #expect(refused["code"]?.string == "capacity_exceeded")
        #expect(refused["message"]?.string?.contains("loading") == true)
        #expect(try alice.next("welcome").message["session"]?.string == "s")
    }

    @Test func aDeleteWhileTheSessionLoadsWaitsForTheJoinAndFindsItInUse() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SlowLoadStore(directory: dir, slowID: "s", delay: 0.5)
        let server = try server(store)
        defer { server.stop() }
        try store.sqlite.commit([.update(SessionUpdate(id: "s", epoch: "before", seq: 0, settings: SessionSettings(), callout: nil))])
        let alice = try server.client()
        alice.send(join("s", name: "Alice"))
        #expect(store.loadStarted.wait())
        let deleting = try HTTPConnection(port: server.port, timeout: 10)
        try deleting.send("DELETE", "/api/sessions/s")
        #expect(try alice.next("welcome").message["snapshot"]?["participants"]?.array?.count == 1)
        let answer = try deleting.answer()
        #expect(answer.status == 409)
        #expect(answer.json?["error"]?.string == "session_in_use")
        #expect(try HTTPConnection.call(port: server.port, "GET", "/api/sessions/s").json?["loaded"]?.bool == true)
    }

    @Test func aCreateWhileAJoinLoadsTheSameSessionFindsItExists() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SlowLoadStore(directory: dir, slowID: "s", delay: 0.5)
        let server = try server(store)
        defer { server.stop() }
        let alice = try server.client()
        alice.send(join("s", name: "Alice"))
        #expect(store.loadStarted.wait())
        let creating = try HTTPConnection(port: server.port, timeout: 10)
        try creating.send("POST", "/api/sessions", body: JSONValue.object(["id": .string("s"), "settings": .object(["dragPolicy": .string("priority")])]).encoded)
        #expect(try alice.next("welcome").message["snapshot"]?["settings"]?["dragPolicy"]?.string == "exclusive")
        let answer = try creating.answer()
        #expect(answer.status == 409)
        #expect(answer.json?["error"]?.string == "already_exists")
    }

    @Test func aJoinWhileACreateCommitsGetsTheCreatedSession() throws {
        try withHeldCommits { store, server in
            store.hold()
            let creating = try HTTPConnection(port: server.port, timeout: 10)
            try creating.send("POST", "/api/sessions", body: JSONValue.object(["id": .string("s"), "settings": .object(["dragPolicy": .string("priority")])]).encoded)
            #expect(store.waitForHeldCommit())
            let alice = try server.client()
            alice.send(join("s", name: "Alice"))
            // The join waits behind the create: the loop answers others meanwhile.
            let bob = try server.joined("other", name: "Bob")
            #expect(try bob.request("ping")["type"]?.string == "ack")
            #expect(!creating.readable)
            store.release()
            #expect(try creating.answer().status == 201)
            #expect(try alice.next("welcome").message["snapshot"]?["settings"]?["dragPolicy"]?.string == "priority")
        }
    }

    @Test func aJoinWhileADeleteCommitsFindsTheSessionGone() throws {
        try withHeldCommits { store, server in
            #expect(try HTTPConnection.call(port: server.port, "POST", "/api/sessions",
                                            json: .object(["id": .string("s"), "settings": .object(["dragPolicy": .string("priority")])])).status == 201)
            store.hold()
            let deleting = try HTTPConnection(port: server.port, timeout: 10)
            try deleting.send("DELETE", "/api/sessions/s")
            #expect(store.waitForHeldCommit())
            let alice = try server.client()
            alice.send(join("s", name: "Alice"))
            store.release()
            #expect(try deleting.answer().status == 204)
            let welcome = try alice.next("welcome").message
            #expect(welcome["snapshot"]?["settings"]?["dragPolicy"]?.string == "exclusive", "a new session, not the deleted one")
        }
    }

    @Test func anAPIWriteIsAnsweredOnlyOnceCommittedWhileTheLoopServesPings() throws {
        try withHeldCommits { store, server in
            let alice = try server.joined("s", name: "Alice")
            store.hold()
            let creating = try HTTPConnection(port: server.port, timeout: 10)
            try creating.send("POST", "/api/sessions", body: JSONValue.object(["id": .string("new")]).encoded)
            #expect(store.waitForHeldCommit())
            // The commit is held; the service thread goes on answering.
            for _ in 0..<20 { #expect(try alice.request("ping")["type"]?.string == "ack") }
            #expect(!creating.readable, "answered before the commit")
            #expect(try store.sqlite.load("new") == nil)
            store.release()
            let answer = try creating.answer()
            let answeredAt = ContinuousClock.now
            #expect(answer.status == 201)
            #expect(try store.sqlite.load("new") != nil)
            #expect(try #require(store.committedAt) <= answeredAt)

            // A settings change of a loaded session too: broadcast at once, answered after its commit.
            store.hold()
            let patching = try HTTPConnection(port: server.port, timeout: 10)
            try patching.send("PATCH", "/api/sessions/s/settings", body: JSONValue.object(["dragPolicy": .string("last-writer-wins")]).encoded)
            #expect(store.waitForHeldCommit())
            #expect(try alice.next("settings").message["settings"]?["dragPolicy"]?.string == "last-writer-wins")
            #expect(try alice.request("ping")["type"]?.string == "ack")
            #expect(!patching.readable)
            store.release()
            #expect(try patching.answer().status == 200)
            #expect(try store.sqlite.load("s")?.record.settings.dragPolicy == .lastWriterWins)
        }
    }

    @Test func aClientThatLeavesBeforeItsAnswerChangesNothingElse() throws {
        try withHeldCommits { store, server in
            store.hold()
            do {
                let gone = try HTTPConnection(port: server.port, timeout: 10)
                try gone.send("POST", "/api/sessions", body: JSONValue.object(["id": .string("s")]).encoded)
                #expect(store.waitForHeldCommit())
            }
            store.release()
            // The change was made all the same; the server goes on.
            let read = try HTTPConnection.call(port: server.port, "GET", "/api/sessions/s")
            #expect(read.status == 200)
            #expect(try server.joined("s", name: "Alice").welcome["type"]?.string == "welcome")
        }
    }

    /// A server whose event log is `log`, on the in-memory session store.
    func server(log: HeldLogStore) throws -> TestServer {
        try TestServer {
            $0.storage.eventLogStore = log
            $0.rateLimit = .unlimited
        }
    }

    @Test func aPageOfAStalledEventLogHoldsUpNoOtherRequest() throws {
        let log = HeldLogStore()
        let server = try server(log: log)
        defer { server.stop() }
        defer { log.release() }
        let alice = try server.joined("s", name: "Alice")
        log.holdReads()
        let reading = try HTTPConnection(port: server.port, timeout: 10)
        try reading.send("GET", "/api/sessions/s/events")
        #expect(log.readHeld.wait())
        // The page is read on a reader thread: the loop answers meanwhile.
        #expect(try alice.request("ping")["type"]?.string == "ack")
        #expect(try HTTPConnection.call(port: server.port, "GET", "/api/sessions/s").status == 200)
        #expect(!reading.readable)
        log.release()
        let page = try reading.answer()
        #expect(page.status == 200)
        #expect(page.json?["session"]?.string == "s")
    }

    @Test func aDeletedSessionsLogIsNotServedWhileItsRemovalWaits() throws {
        let log = HeldLogStore()
        let server = try server(log: log)
        defer { server.stop() }
        defer { log.release() }
        let alice = try server.joined("s", name: "Alice")
        #expect(try alice.request("annotation.add", ["annotation": .point("pin", 1, 1)])["type"]?.string == "ack")
        #expect(log.appended.wait())
        #expect(try alice.request("leave")["type"]?.string == "ack")
        let logged = try HTTPConnection.call(port: server.port, "GET", "/api/sessions/s/events")
        #expect(logged.status == 200)
        #expect(logged.json?["entries"]?.array?.isEmpty == false)

        log.holdRemoves()
        #expect(try HTTPConnection.call(port: server.port, "DELETE", "/api/sessions/s").status == 204)
        #expect(log.removeHeld.wait())
        // The log's entries are still in its store, but the session is gone.
        #expect(try log.memory.entries(of: "s", after: 0, limit: 10).isEmpty == false)
        let gone = try HTTPConnection.call(port: server.port, "GET", "/api/sessions/s/events")
        #expect(gone.status == 404)
        #expect(gone.json?["error"]?.string == "not_found")
    }

    @Test func theServerDrainsWhileAJoinWaits() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let store = try SlowLoadStore(directory: dir, slowID: "s", delay: 0.5)
        let server = try server(store)
        let alice = try server.client()
        alice.send(join("s", name: "Alice"))
        #expect(store.loadStarted.wait())
        let stopped = Event()
        Thread {
            server.stop()
            stopped.fire()
        }.start()
        let closed = try alice.waitFor { $0["type"]?.string == "$closed" }
        #expect(closed["code"]?.number == 1001)
        #expect(stopped.wait())
    }
}
