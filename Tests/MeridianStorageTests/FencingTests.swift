import Foundation
import MeridianCore
import MeridianStorage
import Testing

/// Fencing numbers: the in-memory store enforces them as a shared database does (the same
/// cases as `PostgresFencingTests`); SQLite, one node's file, ignores them.
@Suite struct FencingTests {
    func update(_ session: String, _ seq: UInt64, fence: UInt64?) -> SessionChange {
        let a = Annotation(id: "a\(seq)", shape: .point(Point(coordinate: coordinate(Double(seq), 0))), revision: max(seq, 1))
        return .update(SessionUpdate(id: session, epoch: "e", seq: seq, settings: SessionSettings(), callout: nil, upserted: [a], fence: fence))
    }

    func refusal(_ body: () throws -> Void) -> StorageError? {
        #expect(throws: StorageError.self) { try body() }
    }

    @Test func aStaleUpdateIsRefusedWithItsWholeCommit() throws {
        let store = InMemorySessionStore()
        try store.commit([update("s", 1, fence: 5)])
        let before = try store.load("s")
        let error = refusal { try store.commit([update("t", 1, fence: nil), update("s", 2, fence: 4)]) }
        #expect(error?.isFenced == true && error?.fencedSession == "s" && error?.isWriteFailure == false)
        #expect(error?.message == "storage write fenced off: session s is stored under fence 5, this change came with fence 4")
        #expect(try store.load("s") == before)
        #expect(try store.load("t") == nil)
    }

    @Test func anEqualOrNewerFenceIsStoredAndAChangeWithoutOneKeepsIt() throws {
        let store = InMemorySessionStore()
        try store.commit([update("s", 1, fence: 5), update("s", 2, fence: 5)])
        try store.commit([update("s", 3, fence: 7)])
        try store.commit([update("s", 4, fence: nil)])
        #expect(try store.load("s")?.record.seq == 4)
        let error = refusal { try store.commit([update("s", 5, fence: 6)]) }
        #expect(error?.message == "storage write fenced off: session s is stored under fence 7, this change came with fence 6")
    }

    @Test func aStaleDeleteIsRefusedAndANewerOneRemovesTheSession() throws {
        let store = InMemorySessionStore()
        try store.commit([update("s", 1, fence: 5)])
        let error = refusal { try store.commit([.delete(id: "s", fence: 4)]) }
        #expect(error?.fencedSession == "s")
        #expect(try store.load("s") != nil)
        // Within one commit, a session deleted and written again starts from no fence.
        try store.commit([.delete(id: "s", fence: 5), update("s", 2, fence: 1), .delete(id: "never-stored", fence: 1)])
        #expect(try store.load("s")?.record.seq == 2)
    }

    @Test func aNewOwnersClaimIsStoredAndTheLoadReportsTheFenceBeforeIt() throws {
        let store = InMemorySessionStore()
        try store.commit([update("s", 1, fence: 1)])
        // Above the stored fence: read with the former one, then stored; a former owner's commit is refused.
        #expect(try store.load("s", claiming: 2)?.fence == 1)
        #expect(try store.load("s")?.fence == 2)
        #expect(refusal { try store.commit([update("s", 2, fence: 1)]) }?.fencedSession == "s")
        // Not above it (a lost lease counter that counted up to it again): reported, and nothing changes.
        #expect(try store.load("s", claiming: 2)?.fence == 2)
        #expect(try store.load("s", claiming: 1)?.fence == 2)
        #expect(try store.load("s")?.fence == 2)
        #expect(try store.load("none", claiming: 3) == nil)
    }

    @Test func sqliteIgnoresFences() throws {
        let dir = temporaryDirectory()
        defer { cleanup(dir) }
        let store = try SQLiteSessionStore(directory: dir)
        try store.commit([update("s", 1, fence: 5)])
        try store.commit([update("s", 2, fence: 4), .delete(id: "t", fence: 1)])
        #expect(try store.load("s")?.record.seq == 2)
    }
}
