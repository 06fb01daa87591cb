import Foundation
import MeridianCore
import MeridianServer
import MeridianStorage
import MeridianTesting
import Testing

/// A store whose every write fails, as with a full disk.
final class FailingStore: SessionStore {
    func load(_ id: String) throws(StorageError) -> StoredSession? { nil }
    func list() throws(StorageError) -> [StoredSessionSummary] { [] }
    func commit(_ changes: [SessionChange]) throws(StorageError) { throw .writeFailed("no space left on device (test)") }
}

@Suite("Durable sessions")
struct DurabilityTests {
    func temporaryDirectory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("meridian-live-\(UUID().uuidString)").path
    }

    @Test func aRestartRestoresCommittedStateUnderANewEpoch() throws {
        let dir = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let first = try TestServer { $0.storage.dataDirectory = dir }
        let alice = try first.joined("s", name: "Alice", role: "owner")
        try alice.request("annotation.add", ["annotation": .point("pin", 10, 10, title: "Pin", canShowCallout: true)])
        try alice.request("annotation.add", ["annotation": .point("gone", 1, 1)])
        try alice.request("annotation.remove", ["id": .string("gone")])
        try alice.request("session.configure", ["settings": .object(["dragPolicy": .string("priority")])])
        try alice.request("callout.show", ["callout": .object(["title": .string("Here"), "anchor": .object(["annotation": .string("pin")])])])
        // A drag in progress: its transient position must not be what is restored.
        try alice.request("drag", ["id": .string("pin"), "state": .string("starting")])
        let moved = try alice.request("drag", ["id": .string("pin"), "state": .string("dragging"), "coordinate": JSONValue.coordinate(20, 20)])
        #expect(moved["type"]?.string == "ack")
        let epoch = try #require(alice.welcome["epoch"])
        let seq = try #require(alice.request("ping")["seq"])
        first.stop()

        let second = try TestServer { $0.storage.dataDirectory = dir }
        defer { second.stop() }
        let bob = try second.joined("s", name: "Bob", extra: ["resume": .object(["epoch": epoch, "seq": seq])])
        #expect(bob.welcome["resumed"]?.bool == false)
        #expect(bob.welcome["epoch"] != epoch)
        let snapshot = try #require(bob.welcome["snapshot"])
        let annotations = try #require(snapshot["annotations"]?.array)
        #expect(annotations.compactMap { $0["id"]?.string } == ["pin"])
        #expect(annotations.first?["coordinate"] == JSONValue.coordinate(10, 10))
        #expect(snapshot["settings"]?["dragPolicy"]?.string == "priority")
        #expect(snapshot["callout"]?["title"]?.string == "Here")
        #expect(snapshot["drags"]?.array == [])
    }

    @Test func aFailedWriteAnswersStorageUnavailableAndTheServerGoesOn() throws {
        let server = try TestServer { $0.storage.store = FailingStore() }
        defer { server.stop() }
        let alice = try server.joined("s", name: "Alice")
        let refused = try alice.request("annotation.add", ["annotation": .point("pin", 1, 1)])
        #expect(refused["type"]?.string == "error")
        #expect(refused["code"]?.string == "storage_unavailable")
        #expect(refused["message"]?.string?.contains("no space left on device (test)") == true)
        // Changes that need no storage are still acknowledged.
        let camera = try alice.request("camera.end", ["camera": .object(["center": JSONValue.coordinate(1, 2), "zoom": .number(4)])])
        #expect(camera["type"]?.string == "ack")
        #expect(try alice.request("ping")["type"]?.string == "ack")
    }

    /// One thread: with several, only the new session's own thread unloads one of its sessions.
    @Test func theSessionCapRefusesJoinsUntilAnEmptySessionCanBeUnloaded() throws {
        let server = try TestServer {
            $0.threads = 1
            $0.storage.maxLoadedSessions = 1
            $0.storage.idleUnloadAfter = .seconds(3_600)
        }
        defer { server.stop() }
        let alice = try server.joined("a", name: "Alice")
        try alice.request("annotation.add", ["annotation": .point("kept", 5, 5)])
        let bob = try server.client()
        let refused = try bob.request("join", ["session": .string("b"), "name": .string("Bob"), "role": .string("editor")])
        #expect(refused["type"]?.string == "error")
        #expect(refused["code"]?.string == "capacity_exceeded")
        #expect(try alice.request("leave")["type"]?.string == "ack")
        try bob.join("b", name: "Bob", role: "editor")
        // "a" was unloaded to make room; it comes back from storage.
        let carol = try server.client()
        let full = try carol.request("join", ["session": .string("a"), "name": .string("Carol"), "role": .string("editor")])
        #expect(full["code"]?.string == "capacity_exceeded")
        #expect(try bob.request("leave")["type"]?.string == "ack")
        try carol.join("a", name: "Carol", role: "editor")
        #expect(carol.welcome["snapshot"]?["annotations"]?[0]?["id"]?.string == "kept")
    }

    @Test func anIdleSessionIsUnloadedAndReloadedWithANewEpoch() throws {
        let server = try TestServer {
            $0.storage.idleUnloadAfter = .zero
            // The loop below rejoins as fast as the server answers.
            $0.rateLimit = .unlimited
        }
        defer { server.stop() }
        let alice = try server.joined("s", name: "Alice")
        try alice.request("annotation.add", ["annotation": .point("pin", 3, 3)])
        let firstEpoch = try #require(alice.welcome["epoch"])
        #expect(try alice.request("leave")["type"]?.string == "ack")
        // Rejoin until the session comes back under a new epoch (ticks run every 50 ms).
        let deadline = ContinuousClock.now + .seconds(10)
        var epoch = firstEpoch
        while epoch == firstEpoch && ContinuousClock.now < deadline {
            _ = try alice.request("ping")
            try alice.join("s", name: "Alice", role: "editor")
            epoch = try #require(alice.welcome["epoch"])
            if epoch == firstEpoch { #expect(try alice.request("leave")["type"]?.string == "ack") }
        }
        #expect(epoch != firstEpoch)
        #expect(alice.welcome["snapshot"]?["annotations"]?[0]?["id"]?.string == "pin")
    }
}
