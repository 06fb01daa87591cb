import MeridianCore
@testable import MeridianServer
import MeridianTransport
import Testing

/// Interest filters through the hub, in memory (SPEC §4.7): what a member with a filter alone
/// receives as updates move an annotation in and out of its filter, as drags and removals touch
/// annotations it does not match, and when it changes its filter.
@Suite("Interest filters in memory")
struct InMemoryFilterTests {
    static func point(_ id: String, kind: String) -> JSONValue {
        ["type": "point", "id": .string(id), "kind": .string(kind), "coordinate": ["latitude": .number(51.5), "longitude": .number(-0.12)], "draggable": true]
    }

    func types(_ messages: [JSONValue]) -> [String] { messages.map { $0["type"]?.string ?? "?" } }

    @Test func updatesInAndOutOfTheFilterDragsAndRemovals() throws {
        let memory = try MemoryHubs(count: 1)
        let editor = memory.connect(to: 0), member = memory.connect(to: 0)
        try memory.request("join", ["session": "f", "name": "Editor", "role": "editor"], from: editor)
        try memory.request("annotation.add", ["annotation": Self.point("t", kind: "truck")], from: editor)
        try memory.request("annotation.add", ["annotation": Self.point("c", kind: "car")], from: editor)
        let welcome = try memory.request(
            "join", ["session": "f", "name": "Member", "role": "viewer", "interest": ["mode": "everything", "filter": "kind = 'truck'"]], from: member)
        #expect(welcome["snapshot"]?["annotations"]?.array?.map { $0["id"]?.string } == ["t"])
        #expect(welcome["interest"]?["filter"]?.string == "kind = 'truck'")
        _ = memory.drain(editor)

        // A car dragged and removed: nothing reaches the member until the next event it receives.
        #expect(try memory.request("drag", ["id": "c", "state": "starting"], from: editor)["type"]?.string == "ack")
        #expect(try memory.request("drag", ["id": "c", "state": "dragging", "coordinate": ["latitude": 1, "longitude": 2]], from: editor)["type"]?.string == "ack")
        #expect(try memory.request("drag", ["id": "c", "state": "ending"], from: editor)["type"]?.string == "ack")
        #expect(memory.drain(member).isEmpty)

        // The truck becomes a car: the update, then `left`.
        let out = try memory.request("annotation.update", ["id": "t", "changes": ["kind": "car"]], from: editor)
        var received = memory.drain(member)
        #expect(types(received) == ["skipped", "annotation.updated", "interest"], "\(received)")
        #expect(received.last?["left"]?.array?.map { $0.string } == ["t"])
        #expect(received.last?["seq"]?.number == out["seq"]?.number)

        // The car c becomes a truck: it arrives whole with the update.
        let back = try memory.request("annotation.update", ["id": "c", "changes": ["kind": "truck"]], from: editor)
        received = memory.drain(member)
        #expect(types(received) == ["annotation.updated"], "\(received)")
        #expect(received.first?["annotation"]?["coordinate"]?["latitude"]?.number == 1)
        #expect(received.first?["seq"]?.number == back["seq"]?.number)

        // Removing t, which it does not match, is skipped; removing c reaches it.
        try memory.request("annotation.remove", ["id": "t"], from: editor)
        try memory.request("annotation.remove", ["id": "c"], from: editor)
        #expect(types(memory.drain(member)) == ["skipped", "annotation.removed"])
    }

    @Test func aNewFilterGivesEnteredAndLeftAndBackToEverythingIsComplete() throws {
        let memory = try MemoryHubs(count: 1)
        let editor = memory.connect(to: 0), member = memory.connect(to: 0)
        try memory.request("join", ["session": "g", "name": "Editor", "role": "editor"], from: editor)
        try memory.request("annotation.add", ["annotation": Self.point("t", kind: "truck")], from: editor)
        try memory.request("annotation.add", ["annotation": Self.point("c", kind: "car")], from: editor)
        try memory.request("join", ["session": "g", "name": "Member", "role": "viewer"], from: member)

        // From everything to a filter: a complete interest message with what it matches.
        var answer = try memory.request("interest", ["mode": "everything", "filter": "kind = 'car'"], from: member)
        var received = memory.drain(member)
        #expect(answer["type"]?.string == "ack")
        #expect(received.last?["complete"]?.bool == true && received.last?["entered"]?.array?.map { $0["id"]?.string } == ["c"], "\(received)")

        // Another filter: the difference.
        answer = try memory.request("interest", ["mode": "everything", "filter": "KIND = 'x'"], from: member)
        #expect(answer["type"]?.string == "error" && answer["field"]?.string == "filter", "\(answer)")
        answer = try memory.request("interest", ["mode": "everything", "filter": "kind != 'car'"], from: member)
        received = memory.drain(member)
        #expect(received.last?["complete"]?.bool == false, "\(received)")
        #expect(received.last?["entered"]?.array?.map { $0["id"]?.string } == ["t"] && received.last?["left"]?.array?.map { $0.string } == ["c"])

        // Back to everything: complete, every annotation, no filter in the view.
        try memory.request("interest", ["mode": "everything"], from: member)
        received = memory.drain(member)
        #expect(received.last?["complete"]?.bool == true && received.last?["entered"]?.array?.count == 2)
        #expect(received.last?["view"]?["filter"] == nil)
    }
}
