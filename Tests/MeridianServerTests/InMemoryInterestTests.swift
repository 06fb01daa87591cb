import MeridianCore
@testable import MeridianServer
import MeridianTransport
import Testing

/// Viewport interest through the hub, in memory: the messages a viewport member receives hold
/// together (no event about an annotation it does not hold, clusters inside their area).
@Suite("Viewport interest in memory")
struct InMemoryInterestTests {
    static func interest(_ lat: Double, _ lon: Double, zoom: Double, clusterBelow: Int? = nil) -> JSONValue {
        var fields: [String: JSONValue] = [
            "mode": "viewport", "margin": 0,
            "camera": ["center": ["latitude": .number(lat), "longitude": .number(lon)], "zoom": .number(zoom)],
            "viewport": ["width": 800, "height": 600],
        ]
        if let clusterBelow { fields["clusterBelow"] = .number(Double(clusterBelow)) }
        return .object(fields)
    }

    static func point(_ id: String, _ lat: Double, _ lon: Double) -> JSONValue {
        ["type": "point", "id": .string(id), "coordinate": ["latitude": .number(lat), "longitude": .number(lon)], "draggable": true]
    }

    /// The ids a viewport client holds, kept from what it receives; a message about an annotation it
    /// does not hold is recorded as a fault.
    struct Holdings {
        var ids: Set<String> = []
        var faults: [String] = []

        mutating func apply(_ m: JSONValue) {
            switch m["type"]?.string {
            case "welcome":
                for a in m["snapshot"]?["annotations"]?.array ?? [] { ids.insert(a["id"]!.string!) }
            case "interest":
                if m["complete"]?.bool == true { ids = [] }
                for a in m["entered"]?.array ?? [] { ids.insert(a["id"]!.string!) }
                for id in m["left"]?.array ?? [] {
                    if ids.remove(id.string!) == nil { faults.append("left \(id) it does not hold") }
                }
            case "annotation.added", "annotation.updated":
                ids.insert(m["annotation"]!["id"]!.string!)
            case "annotation.removed":
                if ids.remove(m["id"]!.string!) == nil { faults.append("annotation.removed of \(m["id"]!) it does not hold") }
            case "drag":
                if !ids.contains(m["id"]!.string!) { faults.append("drag \(m["state"]!) of \(m["id"]!) it does not hold") }
            default: break
            }
        }
    }

    @Test func removingAnAnnotationDraggedAwayBringsItBackBeforeItsCancel() throws {
        let memory = try MemoryHubs(count: 1)
        let editor = memory.connect(to: 0), london = memory.connect(to: 0)
        try memory.request("join", ["session": "rm", "name": "Editor", "role": "editor"], from: editor)
        try memory.request("annotation.add", ["annotation": Self.point("x7", 51.5, -0.12)], from: editor)
        var held = Holdings()
        let welcome = try memory.request(
            "join", ["session": "rm", "name": "London", "role": "viewer", "interest": Self.interest(51.5, -0.12, zoom: 10)], from: london)
        held.apply(welcome)
        #expect(held.ids == ["x7"])

        #expect(try memory.request("drag", ["id": "x7", "state": "starting"], from: editor)["type"]?.string == "ack")
        #expect(try memory.request("drag", ["id": "x7", "state": "dragging", "coordinate": ["latitude": .number(35.68), "longitude": .number(139.7)]], from: editor)["type"]?.string == "ack")
        for m in memory.drain(london) { held.apply(m) }
        #expect(held.ids.isEmpty, "x7 left London's area")

        #expect(try memory.request("annotation.remove", ["id": "x7"], from: editor)["type"]?.string == "ack")
        let received = memory.drain(london)
        for m in received { held.apply(m) }
        #expect(held.faults.isEmpty, "\(held.faults)")
        #expect(received.map { $0["type"]?.string ?? "?" } == ["interest", "drag", "drag", "annotation.removed"], "\(received)")
        let entered = try #require(received.first?["entered"]?[0])
        #expect(entered["id"]?.string == "x7" && entered["coordinate"]?["latitude"]?.number == 51.5, "\(entered)")
        #expect(Array(received.dropFirst().prefix(2)).map { $0["state"]?.string } == ["canceling", "none"])
        #expect(held.ids.isEmpty)
    }

    /// An owner's `starting` preempts an editor's drag that took the annotation out of a member's
    /// area: the cancel brings it back. The `interest` message before the cancel stands at its seq:
    /// it lists the editor's drag, which the cancel then ends, and not the owner's, which starts
    /// after it; the member sees the owner's drag start exactly once, in seq order.
    @Test func aPreemptedDragBroughtBackShowsTheDragsAsOfItsSeq() throws {
        let memory = try MemoryHubs(count: 1)
        let owner = memory.connect(to: 0), editor = memory.connect(to: 0), london = memory.connect(to: 0)
        let ownerID = try #require(memory.request("join", ["session": "pre", "name": "Owner", "role": "owner"], from: owner)["participant"]?.string)
        #expect(try memory.request("session.configure", ["settings": ["dragPolicy": "priority"]], from: owner)["type"]?.string == "ack")
        let editorID = try #require(memory.request("join", ["session": "pre", "name": "Editor", "role": "editor"], from: editor)["participant"]?.string)
        try memory.request("annotation.add", ["annotation": Self.point("x6", 51.5, -0.12)], from: editor)
        try memory.request("join", ["session": "pre", "name": "London", "role": "viewer", "interest": Self.interest(51.5, -0.12, zoom: 10)], from: london)
        try memory.request("drag", ["id": "x6", "state": "starting"], from: editor)
        try memory.request("drag", ["id": "x6", "state": "dragging", "coordinate": ["latitude": .number(35.68), "longitude": .number(139.7)]], from: editor)
        _ = memory.drain(london)

        #expect(try memory.request("drag", ["id": "x6", "state": "starting"], from: owner)["type"]?.string == "ack")
        let received = memory.drain(london)
        #expect(received.map { $0["type"]?.string ?? "?" } == ["interest", "drag", "drag", "drag"], "\(received)")
        let interest = try #require(received.first)
        let seq = try #require(interest["seq"]?.number)
        #expect(received.dropFirst().map { $0["seq"]?.number } == [seq + 1, seq + 2, seq + 3])
        #expect(interest["entered"]?[0]?["coordinate"]?["latitude"]?.number == 51.5, "\(interest)")
        let drags = interest["drags"]?.array ?? []
        #expect(drags.map { $0["participant"]?.string } == [editorID], "the drags as of seq \(seq): \(drags)")
        #expect(drags.first?["state"]?.string == "dragging" && drags.first?["coordinate"]?["latitude"]?.number == 35.68)
        let steps = received.dropFirst().map { "\($0["participant"]?.string ?? "?") \($0["state"]?.string ?? "?")" }
        #expect(steps == ["\(editorID) canceling", "\(editorID) none", "\(ownerID) starting"])
    }

    @Test func aViewTakesTheOwnCameraAndTheOwnViewportEachOnItsOwn() throws {
        let memory = try MemoryHubs(count: 1)
        let editor = memory.connect(to: 0), member = memory.connect(to: 0)
        try memory.request("join", ["session": "vp", "name": "Editor", "role": "editor"], from: editor)
        try memory.request("annotation.add", ["annotation": Self.point("paris", 48.85, 2.35)], from: editor)
        // The interest's view: London in 800x600.
        let welcome = try memory.request(
            "join", ["session": "vp", "name": "M", "role": "viewer", "interest": Self.interest(51.5, -0.12, zoom: 10)], from: member)
        let width = { (view: JSONValue?) -> Double in
            view!["area"]!["northEast"]!["longitude"]!.number! - view!["area"]!["southWest"]!["longitude"]!.number!
        }
        let interestWidth = width(welcome["interest"])
        // camera.end without a viewport: its own camera (Paris) with the interest's viewport.
        let paris: [String: JSONValue] = ["camera": ["center": ["latitude": .number(48.85), "longitude": .number(2.35)], "zoom": 10]]
        #expect(try memory.request("camera.end", paris, from: member)["type"]?.string == "ack")
        let moved = try #require(memory.drain(member).first { $0["type"]?.string == "interest" })
        #expect(moved["entered"]?[0]?["id"]?.string == "paris")
        #expect(abs(width(moved["view"]) - interestWidth) < 1e-9, "the interest's viewport")
        // A viewport of its own, twice as wide; a later camera.end without one keeps it.
        var wide = paris
        wide["viewport"] = ["width": 1600, "height": 600]
        #expect(try memory.request("camera.end", wide, from: member)["type"]?.string == "ack")
        _ = memory.drain(member)
        #expect(try memory.request("interest", ["mode": "viewport", "margin": 0], from: member)["type"]?.string == "ack")
        let own = try #require(memory.drain(member).first { $0["type"]?.string == "interest" })
        #expect(abs(width(own["view"]) - 2 * interestWidth) < 1e-6, "its own viewport: \(own)")
        #expect(try memory.request("camera.end", paris, from: member)["type"]?.string == "ack")
        _ = memory.drain(member)
        #expect(try memory.request("interest", ["mode": "viewport", "margin": 0], from: member)["type"]?.string == "ack")
        let kept = try #require(memory.drain(member).first { $0["type"]?.string == "interest" })
        #expect(abs(width(kept["view"]) - 2 * interestWidth) < 1e-6, "a camera.end without viewport keeps the last one: \(kept)")
    }

    @Test func aClusteringViewsClustersLieInItsAreaAndCountWhatItHolds() throws {
        let memory = try MemoryHubs(count: 1)
        let editor = memory.connect(to: 0), dashboard = memory.connect(to: 0)
        try memory.request("join", ["session": "cl", "name": "Editor", "role": "editor"], from: editor)
        // Camera (47, 12) at zoom 4.5 in 800x600 shows about 32.8...58.2 N, 12.9 W...36.9 E.
        let places = [(47.0, 12.0), (46.0, 10.0), (48.0, 14.0), (58.3, 12.0), (47.0, 36.95), (-33.9, 151.2), (10.0, 12.0)]
        for (i, p) in places.enumerated() { try memory.request("annotation.add", ["annotation": Self.point("p\(i)", p.0, p.1)], from: editor) }
        let welcome = try memory.request(
            "join", ["session": "cl", "name": "Dash", "role": "viewer", "interest": Self.interest(47, 12, zoom: 4.5, clusterBelow: 8)], from: dashboard)
        let clusters = try #require(memory.drain(dashboard).first { $0["type"]?.string == "clusters" })
        let view = try #require(clusters["view"])
        #expect(view == welcome["interest"], "the clusters' view is the welcome's")
        #expect(view["zoom"]?.number == 4 && view["clusters"]?.bool == true)
        let area = try #require(view["area"])
        func inside(_ lat: Double, _ lon: Double) -> Bool {
            lat >= area["southWest"]!["latitude"]!.number! && lat <= area["northEast"]!["latitude"]!.number!
                && lon >= area["southWest"]!["longitude"]!.number! && lon <= area["northEast"]!["longitude"]!.number!
        }
        let counted = clusters["clusters"]?.array ?? []
        #expect(counted.map { $0["count"]!.number! }.reduce(0, +) == Double(places.filter(inside).count), "\(clusters)")
        #expect(places.filter(inside).count == 5, "the cells the view touches hold the two points just beyond it")
        for c in counted {
            #expect(inside(c["coordinate"]!["latitude"]!.number!, c["coordinate"]!["longitude"]!.number!), "\(c) outside \(area)")
        }

        // A small pan within the same cells: the area and the clusters stay, nothing is sent.
        let pan: [String: JSONValue] = ["camera": ["center": ["latitude": .number(47.01), "longitude": .number(12.01)], "zoom": .number(4.5)], "viewport": ["width": 800, "height": 600]]
        #expect(try memory.request("camera.end", pan, from: dashboard)["type"]?.string == "ack")
        let afterPan = memory.drain(dashboard).filter { $0["type"]?.string == "clusters" }
        #expect(afterPan.isEmpty, "\(afterPan)")
        // A pan across a cell edge moves the area: clusters again, with the new area, even if the counts stay.
        let across: [String: JSONValue] = ["camera": ["center": ["latitude": 47, "longitude": 15], "zoom": .number(4.5)], "viewport": ["width": 800, "height": 600]]
        #expect(try memory.request("camera.end", across, from: dashboard)["type"]?.string == "ack")
        let moved = try #require(memory.drain(dashboard).first { $0["type"]?.string == "clusters" })
        #expect(moved["view"]?["area"] != area)
    }
}
