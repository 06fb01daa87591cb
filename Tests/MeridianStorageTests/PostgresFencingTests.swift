import Foundation
import MeridianCore
import MeridianPostgres
import MeridianStorage
import Testing

/// Fencing numbers in PostgreSQL: a change written under a fence below the session's stored
/// one is refused with the whole of its transaction; an equal or newer fence is written and stored.
@Suite struct PostgresFencingTests {
    func fencedError(_ body: () throws -> Void) -> StorageError? {
        #expect(throws: StorageError.self) { try body() }
    }

    @Test func aStaleUpdateIsRefusedAndNothingOfItsTransactionIsApplied() throws {
        let store = try PostgresSessionStore(url: try PostgresFixture.database())
        try store.commit([.update(pinUpdate("s", 1, fence: 5))])
        let before = try store.load("s")
        let error = fencedError {
            try store.commit([.update(pinUpdate("t", 1)), .update(pinUpdate("s", 2, fence: 4))])
        }
        #expect(error?.isFenced == true && error?.fencedSession == "s")
        #expect(error?.message == "storage write fenced off: session s is stored under fence 5, this change came with fence 4")
        #expect(try store.load("s") == before)
        #expect(try store.load("t") == nil)
        #expect(try store.list().map(\.id) == ["s"])
    }

    @Test func anEqualOrNewerFenceIsWrittenAndBecomesTheStoredOne() throws {
        let store = try PostgresSessionStore(url: try PostgresFixture.database())
        try store.commit([.update(pinUpdate("s", 1, fence: 5))])
        try store.commit([.update(pinUpdate("s", 2, fence: 5))])
        try store.commit([.update(pinUpdate("s", 3, fence: 7))])
        #expect(try store.load("s")?.record.seq == 3)
        #expect(try store.load("s")?.record.annotations.map(\.id) == ["a1", "a2", "a3"])
        let error = fencedError { try store.commit([.update(pinUpdate("s", 4, fence: 6))]) }
        #expect(error?.message == "storage write fenced off: session s is stored under fence 7, this change came with fence 6")
        #expect(try store.load("s")?.record.seq == 3)
    }

    @Test func aChangeWithoutAFenceIsWrittenAndKeepsTheStoredFence() throws {
        let store = try PostgresSessionStore(url: try PostgresFixture.database())
        try store.commit([.update(pinUpdate("s", 1, fence: 5))])
        try store.commit([.update(pinUpdate("s", 2))])
        #expect(try store.load("s")?.record.seq == 2)
        let error = fencedError { try store.commit([.update(pinUpdate("s", 3, fence: 4))]) }
        #expect(error?.message.hasSuffix("stored under fence 5, this change came with fence 4") == true)
    }

    @Test func aStaleDeleteIsRefusedAndANewerOneRemovesTheSession() throws {
        let store = try PostgresSessionStore(url: try PostgresFixture.database())
        try store.commit([.update(pinUpdate("s", 1, fence: 5)), .update(pinUpdate("other", 1))])
        let error = fencedError { try store.commit([.delete(id: "other"), .delete(id: "s", fence: 4)]) }
        #expect(error?.fencedSession == "s")
        #expect(error?.message == "storage write fenced off: session s is stored under fence 5, this change came with fence 4")
        #expect(try store.list().map(\.id) == ["other", "s"])
        #expect(try store.load("s")?.record.annotations.count == 1)
        try store.commit([.delete(id: "s", fence: 5), .delete(id: "never-stored", fence: 1)])
        #expect(try store.load("s") == nil)
        #expect(try store.list().map(\.id) == ["other"])
    }

    @Test func theFormerOwnerNodeIsFencedOffOnceANewOwnerHasWritten() throws {
        // Two nodes, each with its store (its connections), on one database.
        let url = try PostgresFixture.database()
        let former = try PostgresSessionStore(url: url), owner = try PostgresSessionStore(url: url)
        try former.commit([.update(pinUpdate("s", 1, fence: 1))])
        try owner.commit([.update(pinUpdate("s", 2, fence: 2))])
        let error = fencedError { try former.commit([.update(pinUpdate("s", 3, fence: 1))]) }
        #expect(error?.message == "storage write fenced off: session s is stored under fence 2, this change came with fence 1")
        #expect(try owner.load("s")?.record.seq == 2)
        #expect(try former.load("s")?.record.annotations.map(\.id) == ["a1", "a2"])
    }

    @Test func aNewOwnersClaimAtLoadFencesOffTheFormerOwnersLaterCommits() throws {
        let url = try PostgresFixture.database()
        let former = try PostgresSessionStore(url: url), owner = try PostgresSessionStore(url: url)
        try former.commit([.update(pinUpdate("s", 1, fence: 1))])
        // The new owner loads under fence 2 before writing anything: the session comes with the
        // fence stored before (below the claim: the lease need not move), and 2 is stored now.
        let loaded = try owner.load("s", claiming: 2)
        #expect(loaded?.fence == 1 && loaded?.record.seq == 1)
        #expect(try owner.load("s")?.fence == 2)
        // The former owner, unaware, commits: refused, and nothing of it is stored.
        let error = fencedError { try former.commit([.update(pinUpdate("s", 3, fence: 1))]) }
        #expect(error?.fencedSession == "s")
        #expect(try owner.load("s")?.record.annotations.map(\.id) == ["a1"])
        // A claim below the stored fence changes nothing; loading without a claim neither.
        #expect(try former.load("s", claiming: 1)?.fence == 2)
        #expect(try owner.load("s")?.fence == 2)
        // A claim of the stored fence itself (a lease counter that was lost and counted up to it
        // again) reads that fence: the claimant is not above it.
        #expect(try former.load("s", claiming: 2)?.fence == 2)
    }

    @Test func aDeletedSessionsFenceOutlivesItAndRefusesTheFormerOwnersLateWrite() throws {
        let url = try PostgresFixture.database()
        let former = try PostgresSessionStore(url: url), deleter = try PostgresSessionStore(url: url)
        try former.commit([.update(pinUpdate("s", 3, fence: 4))])
        // Deleted under a newer lease (an HTTP API delete on another node).
        #expect(try deleter.load("s", claiming: 5)?.record.seq == 3)
        try deleter.commit([.delete(id: "s", fence: 5)])
        #expect(try former.load("s") == nil)
        #expect(try former.list().map(\.id) == [])
        // The former owner's write still in flight cannot bring it back, with or without its annotations.
        let error = fencedError { try former.commit([.update(pinUpdate("s", 4, fence: 4))]) }
        #expect(error?.message == "storage write fenced off: session s is stored under fence 5, this change came with fence 4")
        #expect(try deleter.load("s") == nil)
        #expect(try deleter.list().map(\.id) == [])
        // A claim on the deleted session moves its fence on; a create under a newer fence takes it again, empty but for what it wrote.
        #expect(try deleter.load("s", claiming: 6) == nil)
        #expect(fencedError { try former.commit([.update(pinUpdate("s", 1, fence: 5))]) }?.fencedSession == "s")
        try deleter.commit([.update(pinUpdate("s", 1, fence: 6))])
        #expect(try former.load("s")?.record.annotations.map(\.id) == ["a1"])
        #expect(try former.load("s")?.fence == 6)
        #expect(try former.list().map(\.id) == ["s"])
    }
}
