import MeridianCore
import Testing

/// Viewport interest on a hub in memory: what crosses an area's edge, who receives a city's drag
/// moves, and clusters for a hidden dashboard.
@Suite("Viewport interest")
struct ViewportInterestTests {
    static func view(_ lat: Double, _ lon: Double, zoom: Double = 10, clusterBelow: Int? = nil) -> [String: JSONValue] {
        var interest: [String: JSONValue] = [
            "mode": .string("viewport"), "margin": .number(0),
            "camera": .object(["center": .coordinate(lat, lon), "zoom": .number(zoom)]),
            "viewport": .object(["width": .number(800), "height": .number(600)]),
        ]
        if let clusterBelow { interest["clusterBelow"] = .number(Double(clusterBelow)) }
        return ["interest": .object(interest)]
    }

    static func drag(_ c: MemoryClient, _ id: String, _ state: String, _ lat: Double? = nil, _ lon: Double? = nil) throws {
        var fields: [String: JSONValue] = ["id": .string(id), "state": .string(state)]
        if let lat, let lon { fields["coordinate"] = .coordinate(lat, lon) }
        let answer = try c.request("drag", fields)
        #expect(answer["type"]?.string == "ack", "\(answer)")
    }

    @Test func aDragIntoTheAreaBringsTheAnnotationAndOneOutSaysItLeft() throws {
        let server = try MemoryServer()
        let editor = try server.joined("s", name: "Editor")
        try editor.request("annotation.add", ["annotation": .point("pin", 35.68, 139.7)])
        try editor.request("annotation.add", ["annotation": .point("other", 35.6, 139.6)])
        let london = try server.joined("s", name: "London", role: "viewer", extra: Self.view(51.5, -0.12))
        #expect(london.welcome["snapshot"]?["annotations"]?.array?.isEmpty == true)
        #expect(london.welcome["interest"]?["area"]?["southWest"]?["latitude"]?.number ?? 0 > 51)

        try Self.drag(editor, "other", "starting")
        try Self.drag(editor, "pin", "starting")
        try Self.drag(editor, "pin", "dragging", 51.5, -0.1)
        // London skipped the two startings, then learns of the pin before its move arrives.
        let skipped = try london.next()
        #expect(skipped["type"]?.string == "skipped")
        let entered = try london.next()
        let move = try london.next()
        #expect(entered["type"]?.string == "interest")
        #expect(entered["entered"]?[0]?["id"]?.string == "pin")
        #expect(entered["drags"]?[0]?["participant"]?.string == editor.participant)
        #expect(move["type"]?.string == "drag" && move["id"]?.string == "pin")
        #expect(skipped["seq"]?.number == entered["seq"]?.number)
        #expect(move["seq"]?.number == (skipped["seq"]?.number ?? 0) + 1)

        try Self.drag(editor, "pin", "dragging", 48.85, 2.35)
        let out = try london.next()
        let left = try london.next()
        #expect(out["type"]?.string == "drag" && out["coordinate"]?["latitude"]?.number == 48.85)
        #expect(left["type"]?.string == "interest" && left["left"] == .array([.string("pin")]))
        // Moves outside the area reach London no more; the next thing it gets is its own answer.
        try Self.drag(editor, "pin", "dragging", 48.86, 2.36)
        try Self.drag(editor, "other", "dragging", 35.61, 139.61)
        #expect(try london.request("ping")["type"]?.string == "ack")
        #expect(london.pending.isEmpty, "\(london.pending)")
    }

    @Test func aCitysDragMovesReachOnlyThatCity() throws {
        let server = try MemoryServer()
        let cities = [(51.5, -0.12), (35.68, 139.7), (-33.9, 151.2), (40.7, -74.0)]
        let editor = try server.joined("s", name: "Editor")
        for (i, c) in cities.enumerated() { try editor.request("annotation.add", ["annotation": .point("pin\(i)", c.0, c.1)]) }
        let watchers = try cities.enumerated().map { i, c in try server.joined("s", name: "W\(i)", role: "viewer", extra: Self.view(c.0, c.1)) }
        for (i, w) in watchers.enumerated() {
            #expect(w.welcome["snapshot"]?["annotations"]?.array?.map { $0["id"]?.string } == ["pin\(i)"])
        }
        try Self.drag(editor, "pin1", "starting")
        for step in 1...5 { try Self.drag(editor, "pin1", "dragging", 35.68 + Double(step) * 0.001, 139.7) }
        try Self.drag(editor, "pin1", "ending")
        for (i, w) in watchers.enumerated() {
            let received = try w.request("ping")
            #expect(received["type"]?.string == "ack")
            var moves = 0
            while !w.pending.isEmpty {
                if try w.next()["type"]?.string == "drag" { moves += 1 }
            }
            // starting, five moves, ending and none for Tokyo; nothing for the others.
            #expect(moves == (i == 1 ? 8 : 0), "watcher \(i) received \(moves) drag events")
        }
    }

    @Test func aHiddenDashboardGetsClustersThenAnnotationsAsItZoomsIn() throws {
        let server = try MemoryServer()
        let editor = try server.joined("s", name: "Editor")
        for i in 0..<30 { try editor.request("annotation.add", ["annotation": .point("p\(i)", 48.85 + Double(i) * 0.001, 2.35)]) }
        try editor.request("annotation.add", ["annotation": .point("far", -33.9, 151.2)])
        let dashboard = try server.joined("s", name: "Dashboard", role: "owner", extra: Self.view(48.85, 2.35, zoom: 2, clusterBelow: 8)
            .merging(["hidden": .bool(true)]) { a, _ in a })
        #expect(dashboard.welcome["interest"]?["clusters"]?.bool == true)
        #expect(dashboard.welcome["snapshot"]?["annotations"]?.array?.isEmpty == true)
        let first = try dashboard.next("clusters").message
        let clusters = first["clusters"]?.array ?? []
        #expect(clusters.reduce(0) { $0 + ($1["count"]?.number ?? 0) } == 31)
        let paris = try #require(clusters.first { $0["count"]?.number == 30 })
        #expect((paris["splitZoom"]?.number ?? 0) > 2)

        try editor.request("annotation.add", ["annotation": .point("new", 48.9, 2.4)])
        // Clusters that changed go out at the next tick.
        server.tick()
        let updated = try dashboard.next("clusters").message
        #expect(updated["clusters"]?.array?.reduce(0) { $0 + ($1["count"]?.number ?? 0) } == 32)

        let zoomedIn = try #require(Self.view(48.85, 2.35, zoom: 12, clusterBelow: 8)["interest"])
        guard case .object(let fields) = zoomedIn else { Issue.record("interest is not an object"); return }
        let answer = try dashboard.request("interest", fields)
        #expect(answer["type"]?.string == "ack")
        let change = try dashboard.next("interest").message
        #expect(change["view"]?["clusters"]?.bool == false)
        let ids = Set(change["entered"]?.array?.compactMap { $0["id"]?.string } ?? [])
        #expect(ids.contains("p0") && !ids.contains("far"))
    }
}
