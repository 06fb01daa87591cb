import MeridianCore
@testable import MeridianServer
import Testing

/// Welcomes into a session with many annotations share their annotation list: the list goes out
/// as fragments of the welcome, cut once and sent to every joiner (on a hub in memory; what the
/// transport's queues make of them: WireTests).
@Suite("Shared welcomes")
struct SharedWelcomeTests {
    @Test func joinersGetTheWholeSnapshotFromSharedFragments() throws {
        let server = try MemoryServer()
        let owner = try server.joined("big", name: "Owner", role: "owner")
        try Self.seed(owner)
        let joiners = try (0..<6).map { i in try server.joined("big", name: "J\(i)", role: "viewer") }
        #expect(server.hubs[0].sessions["big"]?.sharedAnnotationFragments?.isEmpty == false, "the annotation list was not shared")
        try Self.expectWholeSnapshots(joiners, owner: owner)
    }

    /// An annotation list of about 80 KB, added by `owner`: over the 16 KB threshold for sharing
    /// (and over the tiny queue limits WireTests set).
    static func seed(_ owner: some ScriptedClient) throws {
        for i in 0..<300 {
            let ack = try owner.request("annotation.add", ["annotation": .object([
                "id": .string("pin-\(i)"), "type": .string("point"), "title": .string(String(repeating: "t", count: 80) + "\(i)"),
                "coordinate": .object(["latitude": .number(Double(i % 80)), "longitude": .number(Double(i % 170))]),
            ])])
            #expect(ack["type"]?.string == "ack", "\(ack)")
        }
    }

    /// Every joiner's welcome holds the whole list, and the joiners and the owner are still
    /// served, in order, after it.
    static func expectWholeSnapshots<Joiner: ScriptedClient>(_ joiners: [Joiner], owner: some ScriptedClient) throws {
        for joiner in joiners {
            let annotations = joiner.welcome["snapshot"]?["annotations"]?.array ?? []
            #expect(annotations.count == 300)
            #expect(annotations.first?["id"] == .string("pin-0"))
            #expect(joiner.welcome["snapshot"]?["participants"]?.array?.count ?? 0 >= 2)
            #expect(try joiner.request("ping")["type"]?.string == "ack")
        }
        #expect(try owner.request("ping")["type"]?.string == "ack")
    }
}
