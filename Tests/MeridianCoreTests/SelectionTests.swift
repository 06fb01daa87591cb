import Testing
@testable import MeridianCore

@Suite struct SelectionTests {
    @Test func oneSelectionPerParticipant() throws {
        var (w, o, _, v) = try trio()
        try w.add(point("a"), by: o)
        try w.add(polygon("b"), by: o)
        #expect(try w.events(.select(annotation: "a"), by: v) == [.selection(v, annotation: "a", showsCallout: false)])
        #expect(try w.events(.select(annotation: "b"), by: v) == [.selection(v, annotation: "b", showsCallout: false)])
        #expect(w.participant(v)?.selection == "b")
        try w.ok(.select(annotation: "a"), by: o)
        #expect(w.participant(o)?.selection == "a")
        #expect(w.participant(v)?.selection == "b")
        #expect(try w.events(.deselect, by: v) == [.selection(v, annotation: nil, showsCallout: false)])
        #expect(w.participant(v)?.selection == nil)
        // Deselecting with nothing selected changes nothing.
        let before = w.state
        #expect(try w.events(.deselect, by: v) == [])
        #expect(w.state == before)
    }

    @Test func disabledCannotBeSelected() throws {
        var (w, o, _, v) = try trio()
        try w.add(point("a", enabled: false), by: o)
        try w.refuse(.select(annotation: "a"), by: v, .notSelectable, field: "id")
    }

    @Test func disablingDeselectsEverywhere() throws {
        var (w, o, e, v) = try trio()
        try w.add(point("a"), by: o)
        try w.ok(.select(annotation: "a"), by: v)
        try w.ok(.select(annotation: "a"), by: e)
        let events = try w.events(.updateAnnotation(id: "a", patch { $0.enabled = false }), by: o)
        #expect(events == [
            .annotationUpdated(revised(point("a", enabled: false), w.session.seq - 2)),
            .selection(e, annotation: nil, showsCallout: false),
            .selection(v, annotation: nil, showsCallout: false),
        ])
        #expect(w.participant(v)?.selection == nil)
        #expect(w.participant(e)?.selection == nil)
    }

    @Test(arguments: [
        (true, "Title", true),
        (true, "", false),
        (true, nil, false),
        (false, "Title", false),
    ] as [(Bool, String?, Bool)])
    func showsCalloutOnlyWithCanShowCalloutAndATitle(canShow: Bool, title: String?, shows: Bool) throws {
        var (w, o, _, v) = try trio()
        try w.add(point("a", title: title, canShowCallout: canShow), by: o)
        #expect(try w.events(.select(annotation: "a"), by: v) == [.selection(v, annotation: "a", showsCallout: shows)])
    }

    @Test func shapesCanBeSelected() throws {
        var (w, o, _, v) = try trio()
        try w.add(polyline("l"), by: o)
        #expect(try w.events(.select(annotation: "l"), by: v) == [.selection(v, annotation: "l", showsCallout: false)])
    }
}
