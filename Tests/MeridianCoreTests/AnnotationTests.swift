import Testing
@testable import MeridianCore

@Suite struct AnnotationDefaultsTests {
    @Test func pointDefaults() throws {
        let a = Annotation(id: "a", shape: .point(Point(coordinate: C(1, 2))))
        #expect(a.enabled)
        #expect(a.zIndex == 0)
        #expect(a.metadata.isEmpty)
        let p = try #require(a.point)
        #expect(!p.draggable)
        #expect(!p.canShowCallout)
        #expect(!p.scalesWithViewingDistance)
        #expect(!p.rotatesToMatchCamera)
        #expect(p.centerOffset == .zero)
        #expect(p.calloutOffset == .zero)
        #expect(p.image == nil)
    }

    @Test func shapeDefaultsFollowTheTint() {
        let line = Polyline(coordinates: [C(0, 0), C(1, 1)])
        #expect(line.alpha == 1)
        #expect(line.lineWidth == 3.0)
        #expect(line.strokeColor == nil)
        let poly = Polygon(coordinates: [C(0, 0), C(0, 1), C(1, 1)])
        #expect(poly.alpha == 1)
        #expect(poly.strokeColor == nil)
        #expect(poly.fillColor == nil)
        #expect(poly.holes.isEmpty)
        #expect(SessionSettings().tint == Color(hex: "#007aff"))
    }

    @Test func addedAnnotationsAreStoredAndBroadcastAsSent() throws {
        var (w, _, e, _) = try trio()
        for a in [point("a"), polyline("b"), polygon("c")] {
            let added = revised(a, w.session.seq + 1)
            #expect(try w.events(.addAnnotation(a), by: e) == [.annotationAdded(added)])
            #expect(w.annotation(a.id) == added)
        }
    }

    @Test func polygonWithHoles() throws {
        var (w, o, _, _) = try trio()
        let hole = [C(0.1, 0.1), C(0.1, 0.2), C(0.2, 0.2)]
        let a = Annotation(id: "g", shape: .polygon(Polygon(coordinates: [C(0, 0), C(0, 1), C(1, 1), C(1, 0)], holes: [hole], alpha: 0.5, fillColor: Color(hex: "#f00"))))
        try w.add(a, by: o)
        #expect(w.annotation("g") == revised(a, w.session.seq))
    }
}

@Suite struct AnnotationValidationTests {
    static let big = String(repeating: "x", count: 4_100)

    @Test(arguments: [
        (point("a", at: C(91, 0)), SessionError.Code.invalidField, "annotation.coordinate.latitude"),
        (point("a", at: C(0, -180.5)), .invalidField, "annotation.coordinate.longitude"),
        (point("a", at: C(.nan, 0)), .invalidField, "annotation.coordinate.latitude"),
        (point("", at: C(0, 0)), .invalidField, "annotation.id"),
        (point(String(repeating: "i", count: 129)), .invalidField, "annotation.id"),
        (Annotation(id: "a", shape: .point(Point(coordinate: C(0, 0))), kind: ""), .invalidField, "annotation.kind"),
        (Annotation(id: "a", shape: .point(Point(coordinate: C(0, 0), image: ""))), .invalidField, "annotation.image"),
        (Annotation(id: "a", shape: .point(Point(coordinate: C(0, 0), calloutOffset: Offset(dx: 0, dy: 20_000)))), .invalidField, "annotation.calloutOffset.dy"),
        (point("a", title: String(repeating: "t", count: 257)), .invalidField, "annotation.title"),
        (Annotation(id: "a", shape: .point(Point(coordinate: C(0, 0), centerOffset: Offset(dx: .infinity, dy: 0)))), .invalidField, "annotation.centerOffset.dx"),
        (Annotation(id: "a", shape: .point(Point(coordinate: C(0, 0))), subtitle: String(repeating: "s", count: 1_025)), .invalidField, "annotation.subtitle"),
        (Annotation(id: "a", shape: .point(Point(coordinate: C(0, 0))), metadata: ["blob": .string(big)]), .limitExceeded, "annotation.metadata"),
        (Annotation(id: "a", shape: .point(Point(coordinate: C(0, 0))), metadata: ["n": .number(.nan)]), .invalidField, "annotation.metadata"),
        (polyline("a", [C(0, 0)]), .invalidField, "annotation.coordinates"),
        (polyline("a", [C(0, 0), C(0, 200)]), .invalidField, "annotation.coordinates[1].longitude"),
        (polyline("a", Array(repeating: C(0, 0), count: 10_001)), .limitExceeded, "annotation.coordinates"),
        (Annotation(id: "a", shape: .polyline(Polyline(coordinates: [C(0, 0), C(1, 1)], alpha: 1.5))), .invalidField, "annotation.alpha"),
        (Annotation(id: "a", shape: .polyline(Polyline(coordinates: [C(0, 0), C(1, 1)], lineWidth: -1))), .invalidField, "annotation.lineWidth"),
        (polygon("a", [C(0, 0), C(1, 1)]), .invalidField, "annotation.coordinates"),
        (Annotation(id: "a", shape: .polygon(Polygon(coordinates: [C(0, 0), C(0, 1), C(1, 1)], alpha: -0.1))), .invalidField, "annotation.alpha"),
        (Annotation(id: "a", shape: .polygon(Polygon(coordinates: [C(0, 0), C(0, 1), C(1, 1)], holes: [[C(0, 0)]]))), .invalidField, "annotation.holes[0]"),
    ])
    func invalidFieldIsNamed(annotation: Annotation, code: SessionError.Code, field: String) throws {
        var (w, _, e, _) = try trio()
        try w.add(point("other"), by: e)
        try w.refuse(.addAnnotation(annotation), by: e, code, field: field)
        #expect(w.annotation(annotation.id) == nil)
    }

    @Test func duplicateIdIsRefused() throws {
        var (w, _, e, _) = try trio()
        try w.add(point("a"), by: e)
        try w.refuse(.addAnnotation(polyline("a")), by: e, .alreadyExists, field: "annotation.id")
        #expect(w.annotation("a") == revised(point("a"), w.session.seq))
    }

    @Test func unknownIdIsNotFound() throws {
        var (w, _, e, _) = try trio()
        try w.add(point("a"), by: e)
        try w.refuse(.updateAnnotation(id: "zz", patch { $0.title = "x" }), by: e, .notFound, field: "id")
        try w.refuse(.removeAnnotation(id: "zz"), by: e, .notFound, field: "id")
        try w.refuse(.select(annotation: "zz"), by: e, .notFound)
    }

    @Test(arguments: [
        ("point", patch { $0.lineWidth = 2 }, "changes.lineWidth"),
        ("point", patch { $0.alpha = 0.5 }, "changes.alpha"),
        ("point", patch { $0.coordinates = [C(0, 0), C(1, 1)] }, "changes.coordinates"),
        ("point", patch { $0.fillColor = .some(nil) }, "changes.fillColor"),
        ("line", patch { $0.coordinate = C(0, 0) }, "changes.coordinate"),
        ("line", patch { $0.draggable = true }, "changes.draggable"),
        ("line", patch { $0.fillColor = Color(hex: "#fff") }, "changes.fillColor"),
        ("line", patch { $0.holes = [] }, "changes.holes"),
        ("gon", patch { $0.lineWidth = 4 }, "changes.lineWidth"),
        ("gon", patch { $0.canShowCallout = true }, "changes.canShowCallout"),
    ])
    func patchFieldForeignToTheShapeIsRefused(id: String, p: AnnotationPatch, field: String) throws {
        var (w, _, e, _) = try trio()
        try w.add(point("point"), by: e)
        try w.add(polyline("line"), by: e)
        try w.add(polygon("gon"), by: e)
        try w.refuse(.updateAnnotation(id: id, p), by: e, .invalidField, field: field)
    }

    @Test(arguments: [
        (patch { $0.coordinate = C(0, 181) }, "changes.coordinate.longitude"),
        (patch { $0.title = .some(String(repeating: "t", count: 300)) }, "changes.title"),
        (patch { $0.metadata = ["k": .string(AnnotationValidationTests.big)] }, "changes.metadata"),
        (patch { $0.kind = .some("") }, "changes.kind"),
    ])
    func invalidUpdateIsRefused(p: AnnotationPatch, field: String) throws {
        var (w, _, e, _) = try trio()
        try w.add(point("a"), by: e)
        try w.refuse(.updateAnnotation(id: "a", p), by: e, field == "changes.metadata" ? .limitExceeded : .invalidField, field: field)
    }

    @Test func invalidShapeUpdateIsRefused() throws {
        var (w, _, e, _) = try trio()
        try w.add(polyline("l"), by: e)
        try w.refuse(.updateAnnotation(id: "l", patch { $0.alpha = 1.5 }), by: e, .invalidField, field: "changes.alpha")
        try w.refuse(.updateAnnotation(id: "l", patch { $0.coordinates = [C(0, 0)] }), by: e, .invalidField, field: "changes.coordinates")
    }
}

@Suite struct AnnotationLimitTests {
    @Test func annotationCountIsLimited() throws {
        var w = World(limits: { $0.maxAnnotations = 2 })
        let e = try w.join("Ed")
        try w.add(point("a"), by: e)
        try w.add(point("b"), by: e)
        try w.refuse(.addAnnotation(point("c")), by: e, .limitExceeded)
        try w.ok(.removeAnnotation(id: "a"), by: e)
        try w.add(point("c"), by: e)
    }

    @Test func shapeSizesAreLimited() throws {
        var w = World(limits: { $0.maxCoordinatesPerShape = 5; $0.maxHolesPerPolygon = 1 })
        let e = try w.join("Ed")
        let ring = [C(0, 0), C(0, 1), C(1, 1)]
        try w.add(polyline("ok", Array(repeating: C(0, 0), count: 5)), by: e)
        try w.refuse(.addAnnotation(polyline("l", Array(repeating: C(0, 0), count: 6))), by: e, .limitExceeded, field: "annotation.coordinates")
        try w.refuse(.addAnnotation(Annotation(id: "g", shape: .polygon(Polygon(coordinates: ring, holes: [ring, ring])))), by: e, .limitExceeded, field: "annotation.holes")
        try w.refuse(.addAnnotation(Annotation(id: "g", shape: .polygon(Polygon(coordinates: ring, holes: [ring])))), by: e, .limitExceeded, field: "annotation.holes")
        try w.refuse(.updateAnnotation(id: "ok", patch { $0.coordinates = Array(repeating: C(0, 0), count: 6) }), by: e, .limitExceeded, field: "changes.coordinates")
    }

    @Test func metadataWithinTheLimitIsKept() throws {
        var (w, _, e, _) = try trio()
        let meta: [String: JSONValue] = ["blob": .string(String(repeating: "x", count: 4_000)), "n": .number(1), "tags": .array([.bool(true), .null])]
        try w.add(Annotation(id: "m", shape: .point(Point(coordinate: C(0, 0))), metadata: meta), by: e)
        #expect(w.annotation("m")?.metadata == meta)
    }
}

@Suite struct AnnotationChangeTests {
    @Test func updateEmitsTheFullAnnotation() throws {
        var (w, _, e, _) = try trio()
        try w.add(point("a", title: "Old", draggable: true), by: e)
        let events = try w.events(.updateAnnotation(id: "a", patch { $0.title = "New"; $0.coordinate = C(5, 6); $0.zIndex = 3 }), by: e)
        var expected = revised(point("a", at: C(5, 6), title: "New", zIndex: 3, draggable: true), w.session.seq)
        #expect(events == [.annotationUpdated(expected)])
        #expect(w.annotation("a") == expected)
        // .some(nil) clears an optional field.
        expected.title = nil
        expected.revision += 1
        #expect(try w.events(.updateAnnotation(id: "a", patch { $0.title = .some(nil) }), by: e) == [.annotationUpdated(expected)])
    }

    @Test func shapeUpdates() throws {
        var (w, _, e, _) = try trio()
        try w.add(polyline("l"), by: e)
        let red = Color(hex: "#ff0000")
        try w.ok(.updateAnnotation(id: "l", patch { $0.lineWidth = 7; $0.strokeColor = red; $0.alpha = 0.25 }), by: e)
        #expect(w.annotation("l")?.shape == .polyline(Polyline(coordinates: [C(0, 0), C(1, 1)], alpha: 0.25, strokeColor: red, lineWidth: 7)))
    }

    @Test func orderedAnnotationsStackByZIndexThenId() throws {
        var (w, _, e, _) = try trio()
        for a in [point("c", zIndex: 1), point("b", zIndex: 1), point("a", zIndex: 2), polyline("z"), point("d", zIndex: -1)] {
            try w.add(a, by: e)
        }
        #expect(w.session.orderedAnnotations.map(\.id) == ["d", "z", "b", "c", "a"])
        try w.ok(.updateAnnotation(id: "d", patch { $0.zIndex = 5 }), by: e)
        #expect(w.session.orderedAnnotations.map(\.id) == ["z", "b", "c", "a", "d"])
    }

    @Test func removeDeselectsForAllDismissesItsCalloutAndCancelsItsDrag() throws {
        var (w, o, e, v) = try trio()
        let start = C(10, 20)
        try w.add(point("a", at: start, title: "A", draggable: true, canShowCallout: true), by: o)
        try w.add(point("b"), by: o)
        try w.ok(.select(annotation: "a"), by: o)
        try w.ok(.select(annotation: "a"), by: v)
        try w.ok(.select(annotation: "b"), by: e)
        try w.ok(.showCallout(Callout(title: "A", anchor: .annotation("a"))), by: o)
        try w.drag("a", .starting, by: e)
        try w.drag("a", .dragging, C(11, 21), by: e)

        let events = try w.events(.removeAnnotation(id: "a"), by: o)
        #expect(events == [
            .drag(annotation: "a", participant: e, state: .canceling, coordinate: start, reason: .annotationRemoved),
            .drag(annotation: "a", participant: e, state: .none, coordinate: start, reason: .annotationRemoved),
            .selection(o, annotation: nil, showsCallout: false),
            .selection(v, annotation: nil, showsCallout: false),
            .calloutHidden(reason: "annotation_removed"),
            .annotationRemoved("a"),
        ])
        #expect(w.annotation("a") == nil)
        #expect(w.session.drags["a"] == nil)
        #expect(w.participant(o)?.selection == nil)
        #expect(w.participant(v)?.selection == nil)
        #expect(w.participant(e)?.selection == "b")
        #expect(w.session.callout == nil)
    }

    @Test func removingACalloutOfAnotherAnchorKeepsIt() throws {
        var (w, o, _, _) = try trio()
        try w.add(point("a"), by: o)
        let c = Callout(title: "Here", anchor: .coordinate(C(1, 1)))
        try w.ok(.showCallout(c), by: o)
        try w.ok(.removeAnnotation(id: "a"), by: o)
        #expect(w.session.callout == c)
    }
}
