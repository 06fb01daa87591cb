import MeridianCore
import Testing

/// Reconnecting with a resume point, on hubs in memory: one, and four with the members spread
/// over them.
@Suite("Reconnect and resume")
struct ResumeTests {
    @Test(arguments: [1, 4]) func resumeDeliversExactlyTheMissedEvents(threads: Int) throws {
        let server = try MemoryServer(threads: threads)
        let alice = try server.joined("s", name: "Alice")
        let bob = try server.joined("s", name: "Bob")
        _ = try alice.next("participant.joined")
        try bob.request("annotation.add", ["annotation": .point("one", 1, 1)])
        let bobSeq = try bob.next("annotation.added").message["seq"]!.number!
        let epoch = bob.welcome["epoch"]!
        bob.disconnect()
        _ = try alice.next("participant.left")

        try alice.request("annotation.add", ["annotation": .point("two", 2, 2)])
        try alice.request("annotation.update", ["id": .string("one"), "changes": .object(["title": .string("renamed")])])

        let back = try server.joined("s", name: "Bob", extra: ["resume": .object(["epoch": epoch, "seq": .number(bobSeq)])])
        #expect(back.welcome["resumed"]?.bool == true)
        #expect(back.welcome["snapshot"] == nil)
        let missed = try (0..<4).map { _ in try back.next() }
        #expect(missed.map { $0["type"]?.string } == ["participant.left", "annotation.added", "annotation.updated", "participant.joined"])
        #expect(missed.compactMap { $0["seq"]?.number } == (1...4).map { bobSeq + Double($0) })
        #expect(try back.next()["type"]?.string == "live")
    }

    @Test(arguments: [1, 4]) func staleEpochGetsAFreshSnapshot(threads: Int) throws {
        let server = try MemoryServer(threads: threads)
        let alice = try server.joined("s", name: "Alice")
        try alice.request("annotation.add", ["annotation": .point("one", 1, 1)])
        let bob = try server.joined("s", name: "Bob", extra: ["resume": .object(["epoch": .string("old"), "seq": .number(1)])])
        #expect(bob.welcome["resumed"]?.bool == false)
        #expect(bob.welcome["snapshot"]?["annotations"]?.array?.count == 1)
    }

    @Test(arguments: [1, 4]) func historyTooShortGetsAFreshSnapshot(threads: Int) throws {
        let server = try MemoryServer(threads: threads) { $0.historySize = 2 }
        let alice = try server.joined("s", name: "Alice")
        let epoch = alice.welcome["epoch"]!
        for i in 0..<5 { try alice.request("annotation.add", ["annotation": .point("a\(i)", 1, 1)]) }
        let bob = try server.joined("s", name: "Bob", extra: ["resume": .object(["epoch": epoch, "seq": .number(1)])])
        #expect(bob.welcome["resumed"]?.bool == false)
        #expect(bob.welcome["snapshot"]?["annotations"]?.array?.count == 5)
    }
}
