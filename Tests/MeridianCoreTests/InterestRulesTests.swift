#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
@testable import MeridianCore

/// The rules of SPEC §4.7 that a client cannot guess, one case each: what a viewport member is
/// sent when a removal cancels a drag, how `interest` messages account for seq, which
/// annotations a cluster counts, and how tilt and the poles shape the area.
@Suite struct InterestRulesTests {
    static let londonView = InterestView(
        Interest(mode: .viewport, margin: 0, camera: cam(51.5, -0.12, zoom: 10), viewport: Viewport(width: 800, height: 600)),
        participant: nil)

    /// A session with `x7` in London, a member viewing London and an editor.
    static func london() throws -> (World, InterestRouter<String>, editor: ParticipantID) {
        var world = World()
        let editor = try world.join("Editor")
        try world.add(point("x7", at: C(51.5, -0.12), draggable: true), by: editor)
        var router = InterestRouter<String>(session: world.session)
        let change = router.setView(londonView, of: "london", seq: world.session.seq, complete: true, in: world.session)
        #expect(change.entered.map(\.id) == ["x7"])
        return (world, router, editor)
    }

    @Test func aDragCanceledByRemovingItsAnnotationBringsItBackWholeFirst() throws {
        var (world, router, editor) = try Self.london()
        try world.drag("x7", .starting, by: editor)
        let out = try world.ok(.drag(annotation: "x7", state: .dragging, coordinate: C(35.68, 139.7)), by: editor)
        #expect(out.events.map { router.route($0, in: world.session).leaving } == [["london"]])

        let departed = world.session.annotations["x7"]
        let removal = try world.ok(.removeAnnotation(id: "x7"), by: editor).events
        let routes = removal.map { router.route($0, in: world.session, departed: departed) }
        // canceling (back in London), none, annotation.removed.
        #expect(removal.map(\.event.name) == ["drag", "drag", "annotation.removed"])
        #expect(routes[0].entering.map(\.member) == ["london"])
        let entered = try #require(routes[0].entering.first?.annotation)
        #expect(entered.id == "x7" && entered.point?.coordinate == C(51.5, -0.12))
        #expect(routes.allSatisfy { $0.recipients == ["london"] })
        #expect(routes.allSatisfy { $0.leaving.isEmpty }, "annotation.removed is not followed by left")
    }

    @Test func aRemovalWithoutTheAnnotationAtHandSendsNothingAboutIt() throws {
        // Without the removed annotation (a caller that does not pass it), the canceled drag
        // cannot be announced whole: the router then has no entering to offer.
        var (world, router, editor) = try Self.london()
        try world.drag("x7", .starting, by: editor)
        let out = try world.ok(.drag(annotation: "x7", state: .dragging, coordinate: C(35.68, 139.7)), by: editor)
        _ = out.events.map { router.route($0, in: world.session) }
        let removal = try world.ok(.removeAnnotation(id: "x7"), by: editor).events
        #expect(router.route(removal[0], in: world.session).entering.isEmpty)
    }

    @Test func anInterestMessageForATransientMoveAccountsForItsSeq() throws {
        var world = World()
        let editor = try world.join("Editor")
        try world.add(point("pin", at: C(35.68, 139.7), draggable: true), by: editor)
        var router = InterestRouter<String>(session: world.session)
        _ = router.setView(Self.londonView, of: "london", seq: world.session.seq, complete: true, in: world.session)
        try world.drag("pin", .starting, by: editor)
        try world.drag("pin", .dragging, C(35.7, 139.7), by: editor)
        // Outside London: a transient move, nothing for the member.
        let far = try world.ok(.drag(annotation: "pin", state: .dragging, coordinate: C(35.71, 139.7)), by: editor).events[0]
        #expect(far.isTransient && router.route(far, in: world.session).recipients.isEmpty)
        // A transient move into London: entered at the move's seq, which the stream now accounts for.
        let into = try world.ok(.drag(annotation: "pin", state: .dragging, coordinate: C(51.5, -0.1)), by: editor).events[0]
        let route = router.route(into, in: world.session)
        #expect(into.isTransient && route.entering.map(\.member) == ["london"])
        #expect(route.skipped.isEmpty)
        // The next discrete event needs no marker for the seqs the interest message covered.
        let end = try world.ok(.drag(annotation: "pin", state: .ending, coordinate: nil), by: editor).events
        let first = router.route(end[0], in: world.session)
        #expect(end[0].seq == into.seq + 1)
        #expect(first.skipped.isEmpty, "skipped \(first.skipped) after an interest message at \(into.seq)")
    }

    @Test func anAnnotationUpdateThatMovesOneInReachesTheMemberWhole() throws {
        var world = World()
        let editor = try world.join("Editor")
        try world.add(polyline("road", [C(35, 139), C(36, 140)]), by: editor)
        var router = InterestRouter<String>(session: world.session)
        _ = router.setView(Self.londonView, of: "london", seq: world.session.seq, complete: true, in: world.session)
        let moved = try world.ok(.updateAnnotation(id: "road", patch { $0.coordinates = [C(51.5, -0.12), C(51.51, -0.1)] }), by: editor).events
        let route = router.route(moved[0], in: world.session)
        // No `interest` message: `annotation.updated` carries the whole annotation.
        #expect(route.recipients == ["london"] && route.entering.isEmpty && route.leaving.isEmpty)
    }

    // MARK: Clusters

    /// SPEC §4.7's example: camera (47, 12) at zoom 4.5 in 800x600, no margin, clusterBelow 8.
    static let alpsInterest = Interest(
        mode: .viewport, margin: 0, clusterBelow: 8, camera: cam(47, 12, zoom: 4.5), viewport: Viewport(width: 800, height: 600))

    @Test func aClusteringViewCountsWholeCellsAndItsAreaIsTheirEdges() throws {
        let view = InterestView(Self.alpsInterest, participant: nil)
        let cells = try #require(view.cells)
        let area = try #require(view.area)
        let raw = ViewArea.bounds(camera: cam(47, 12, zoom: 4.5), viewport: Viewport(width: 800, height: 600), margin: 0)
        #expect(view.clusters && view.zoom == 4 && cells.zoom == 4)
        // The area holds the view, and is made of 64-point cells at zoom 4 (16 * 4 = 64 across).
        #expect(area.southWest.latitude <= raw.southWest.latitude && area.northEast.latitude >= raw.northEast.latitude)
        #expect(area.southWest.longitude <= raw.southWest.longitude && area.northEast.longitude >= raw.northEast.longitude)
        #expect(cells.count == 64)
        for edge in [area.southWest.longitude, area.northEast.longitude] {
            let column = (edge + 180) / 360 * 64
            #expect(abs(column - column.rounded()) < 1e-9, "\(edge) is not on a cell edge")
        }

        // Points just beyond the view to the north and east, and inside.
        var index = ClusterIndex()
        let points = [
            ("in1", C(47, 12)), ("in2", C(46, 10)), ("in3", C(48, 14)),
            ("north", C(raw.northEast.latitude + 0.05, 12)), ("east", C(47, raw.northEast.longitude + 0.05)),
            ("far", C(-33.9, 151.2)),
        ]
        for (id, c) in points { index.insert(id, at: c) }
        let clusters = index.clusters(in: cells)
        let inside = points.filter { area.intersects(Bounds(point: $0.1)) }
        #expect(clusters.map(\.count).reduce(0, +) == inside.count)
        #expect(inside.count == 5, "the cells the view touches hold the points just beyond it: \(inside.map(\.0))")
        for c in clusters { #expect(area.intersects(Bounds(point: c.coordinate)), "cluster at \(c.coordinate) outside \(area)") }
    }

    @Test(arguments: 0..<20)
    func everyClusterCountsExactlyTheAnnotationsInItsArea(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed &* 31 &+ 5)
        var index = ClusterIndex()
        var coordinates: [String: Coordinate] = [:]
        for i in 0..<400 {
            let c = C(rng.double(-89...89), rng.double(-180...179.999))
            coordinates["a\(i)"] = c
            index.insert("a\(i)", at: c)
        }
        for _ in 0..<25 {
            let camera = cam(rng.double(-84...84), rng.double(-180...179), zoom: rng.double(0...18), bearing: rng.chance(0.3) ? rng.double(0...359) : 0)
            let interest = Interest(
                mode: .viewport, margin: rng.pick([0, 0.5, 1]), clusterBelow: 24, camera: camera,
                viewport: Viewport(width: rng.pick([320, 800, 1600]), height: rng.pick([240, 600])))
            let view = InterestView(interest, participant: nil)
            let cells = try #require(view.cells)
            let area = try #require(view.area)
            #expect(view.zoom <= ClusterIndex.defaultMaxZoom)
            let clusters = index.clusters(in: cells)
            // Annotations on a cell's east or south edge belong to the next cell: random doubles
            // never land there.
            let inside = coordinates.values.filter { area.intersects(Bounds(point: $0)) }
            #expect(clusters.map(\.count).reduce(0, +) == inside.count, "seed \(seed) \(camera) \(area)")
            for c in clusters where !area.intersects(Bounds(point: c.coordinate)) {
                Issue.record("seed \(seed): cluster at \(c.coordinate) outside \(area)")
            }
            for c in clusters { #expect(c.splitZoom.map { $0 <= ClusterIndex.defaultMaxZoom } ?? true) }
        }
    }

    // MARK: The area

    @Test func tiltLengthensWidthAndHeightBeforeTheBearing() {
        let viewport = Viewport(width: 800, height: 600)
        let tilted = ViewArea.bounds(camera: cam(30, 40, zoom: 8, pitch: 60, bearing: 30), viewport: viewport, margin: 0)
        let scale = 1 / cos(60 * Double.pi / 180)
        let flat = ViewArea.bounds(
            camera: cam(30, 40, zoom: 8, bearing: 30), viewport: Viewport(width: 800 * scale, height: 600 * scale), margin: 0)
        for (a, b) in [(tilted.southWest, flat.southWest), (tilted.northEast, flat.northEast)] {
            #expect(abs(a.latitude - b.latitude) < 1e-9 && abs(a.longitude - b.longitude) < 1e-9, "\(tilted) vs \(flat)")
        }
    }

    @Test func anAreaRunsToThePoleOnlyWhenTheViewReachesBeyondTheMercatorLimit() {
        let viewport = Viewport(width: 256, height: 256)
        // At zoom 4 the world is 4096 points tall: 128 points above the centre.
        let top = Mercator.latitude(y: 0)
        let near = ViewArea.bounds(camera: cam(Mercator.latitude(y: 200.0 / 4096), 0, zoom: 4), viewport: viewport, margin: 0)
        #expect(near.northEast.latitude < top && abs(near.northEast.latitude - Mercator.latitude(y: 72.0 / 4096)) < 1e-9)
        let beyond = ViewArea.bounds(camera: cam(Mercator.latitude(y: 100.0 / 4096), 0, zoom: 4), viewport: viewport, margin: 0)
        #expect(beyond.northEast.latitude == 90)
        let south = ViewArea.bounds(camera: cam(-85.0511, 0, zoom: 4), viewport: viewport, margin: 0)
        #expect(south.southWest.latitude == -90)
        #expect(abs(top - 85.0511287798) < 1e-9)
    }
}

private extension Event {
    var name: String {
        switch self {
        case .drag: "drag"
        case .annotationRemoved: "annotation.removed"
        default: "\(self)"
        }
    }
}
