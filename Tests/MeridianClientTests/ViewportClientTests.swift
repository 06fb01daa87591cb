import Foundation
@testable import MeridianClient
import MeridianCore
import MeridianTesting
import Testing

@Suite("Client library with viewport interest")
struct ViewportClientTests {
    static let paris = Coordinate(latitude: 48.85, longitude: 2.35)
    static let tokyo = Coordinate(latitude: 35.68, longitude: 139.7)

    /// A viewport client's mirror holds exactly the annotations of its city while another client
    /// edits and drags everywhere, follows its camera to another city, and never sees a gap.
    @Test func mirrorHoldsTheAreaThroughEditsDragsAndMoves() async throws {
        let server = try TestServer.overWire()
        defer { server.stop() }
        let editor = MeridianClient(over: server, configuration: ClientConfiguration(session: "s", name: "Editor"))
        let interest = Interest(mode: .viewport, margin: 0, camera: Camera(center: Self.paris, zoom: 11), viewport: Viewport(width: 1024, height: 768))
        let viewer = MeridianClient(over: server, configuration: ClientConfiguration(session: "s", name: "Viewer", role: .viewer, interest: interest))
        let viewerLog = Recorder()
        viewer.delegate = viewerLog
        defer { editor.close(); viewer.close() }
        try editor.connect()
        for i in 0..<10 {
            try await editor.send(.annotationAdd(point("paris\(i)", 48.85 + Double(i) * 0.001, 2.35)))
            try await editor.send(.annotationAdd(point("tokyo\(i)", 35.68, 139.7 + Double(i) * 0.001)))
        }
        let welcome = try viewer.connect()
        #expect(welcome.snapshot?["annotations"]?.arrayValue?.count == 10)

        try await editor.send(.annotationRemove(id: "paris9"))
        try await editor.send(.annotationRemove(id: "tokyo9"))
        try await editor.send(.annotationUpdate(id: "tokyo0", changes: ["title": .string("not seen in Paris")]))
        // paris0 is dragged to Tokyo, tokyo1 to Paris.
        for (id, to) in [("paris0", Self.tokyo), ("tokyo1", Self.paris)] {
            try await editor.send(.drag(id: id, state: .starting))
            try await editor.send(.drag(id: id, state: .dragging, coordinate: to))
            try await editor.send(.drag(id: id, state: .ending))
        }
        var last = try await editor.send(.ping).seq
        #expect(viewerLog.wait { _ in (viewer.state?.seq ?? 0) >= last })
        var ids = Set(viewer.state?.annotations.keys.map { $0 } ?? [])
        #expect(ids == Set((1...8).map { "paris\($0)" } + ["tokyo1"]))

        try await viewer.send(.cameraEnd(camera: Camera(center: Self.tokyo, zoom: 11)))
        last = try await editor.send(.ping).seq
        #expect(viewerLog.wait { _ in (viewer.state?.seq ?? 0) >= last })
        ids = Set(viewer.state?.annotations.keys.map { $0 } ?? [])
        #expect(ids == Set((0...8).filter { $0 != 1 }.map { "tokyo\($0)" } + ["paris0"]))
        #expect(viewer.state?.annotations["tokyo0"]?["title"]?.stringValue == "not seen in Paris")
        #expect(viewerLog.updates.filter { if case .didConnect = $0 { true } else { false } }.count == 1, "no reconnect after a gap")
        #expect(viewerLog.updates.contains { if case .areaDidChange = $0 { true } else { false } })
    }

    /// A client joining with a filter alone holds exactly the annotations the filter matches
    /// while updates move annotations in and out of it.
    @Test func filteredMirrorHoldsTheMatchingAnnotations() async throws {
        let server = try TestServer.overWire()
        defer { server.stop() }
        let editor = MeridianClient(over: server, configuration: ClientConfiguration(session: "s", name: "Editor"))
        let interest = Interest(mode: .everything, filter: try AnnotationFilter("metadata.team = 'red'"))
        let viewer = MeridianClient(over: server, configuration: ClientConfiguration(session: "s", name: "Viewer", role: .viewer, interest: interest))
        let viewerLog = Recorder()
        viewer.delegate = viewerLog
        defer { editor.close(); viewer.close() }
        try editor.connect()
        for i in 0..<6 {
            try await editor.send(.annotationAdd(point("p\(i)", 48.85, 2.35 + Double(i) * 0.001, metadata: ["team": .string(i % 2 == 0 ? "red" : "blue")])))
        }
        let welcome = try viewer.connect()
        #expect(welcome.interest?["filter"]?.stringValue == "metadata.team = 'red'")
        #expect(welcome.snapshot?["annotations"]?.arrayValue?.count == 3)
        try await editor.send(.annotationUpdate(id: "p0", changes: ["metadata": .object(["team": .string("blue")])]))
        try await editor.send(.annotationUpdate(id: "p3", changes: ["title": .string("unseen")]))
        // The last change is one the viewer receives (a skipped seq is accounted for only by the next).
        let last = try await editor.send(.annotationUpdate(id: "p1", changes: ["metadata": .object(["team": .string("red")])])).seq
        #expect(viewerLog.wait { _ in (viewer.state?.seq ?? 0) >= last })
        #expect(Set(viewer.state?.annotations.keys.map { $0 } ?? []) == ["p1", "p2", "p4"])
        #expect(viewerLog.updates.filter { if case .didConnect = $0 { true } else { false } }.count == 1, "no reconnect after a gap")
    }
}
