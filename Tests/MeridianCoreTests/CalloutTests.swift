import Testing
@testable import MeridianCore

@Suite struct CalloutTests {
    let here = Callout(title: "Here", detail: "d", image: "img", accessory: .button(.detailDisclosure), anchor: .coordinate(C(1, 2)))

    @Test func showReplaceHide() throws {
        var (w, o, e, _) = try trio()
        #expect(try w.events(.showCallout(here), by: e) == [.calloutShown(here, by: e)])
        #expect(w.session.callout == here)
        #expect(w.session.calloutShownBy == e)
        #expect(w.session.calloutCoordinate == C(1, 2))
        let there = Callout(title: "There", anchor: .coordinate(C(3, 4)))
        #expect(try w.events(.showCallout(there), by: o) == [.calloutShown(there, by: o)])
        #expect(w.session.callout == there)
        #expect(w.session.calloutShownBy == o)
        #expect(try w.events(.hideCallout, by: e) == [.calloutHidden(reason: "hidden")])
        #expect(w.session.callout == nil)
        #expect(w.session.calloutShownBy == nil)
        #expect(try w.events(.hideCallout, by: e) == [])
    }

    @Test func invalidCalloutFieldsAreRefused() throws {
        var (w, _, e, _) = try trio()
        try w.refuse(.showCallout(Callout(title: String(repeating: "t", count: 257), anchor: .coordinate(C(0, 0)))), by: e, .invalidField, field: "callout.title")
        try w.refuse(.showCallout(Callout(title: "t", anchor: .coordinate(C(95, 0)))), by: e, .invalidField, field: "callout.anchor.coordinate.latitude")
        try w.refuse(.showCallout(Callout(title: "t", accessory: .image(""), anchor: .coordinate(C(0, 0)))), by: e, .invalidField, field: "callout.accessory.image")
        try w.refuse(.showCallout(Callout(title: "t", anchor: .annotation("nope"))), by: e, .notFound, field: "callout.anchor.annotation")
        try w.refuse(.showCallout(Callout(title: "t", anchor: .participant("p99"))), by: e, .notFound, field: "callout.anchor.participant")
    }

    @Test(arguments: [
        point("a", title: "A", canShowCallout: false),
        point("a", title: nil, canShowCallout: true),
        point("a", title: "", canShowCallout: true),
        Annotation(id: "a", shape: .polyline(Polyline(coordinates: [C(0, 0), C(1, 1)])), title: "Line"),
    ])
    func annotationAnchorNeedsCanShowCalloutAndTitle(annotation: Annotation) throws {
        var (w, o, _, _) = try trio()
        try w.add(annotation, by: o)
        try w.ok(.showCallout(here), by: o)
        try w.refuse(.showCallout(Callout(title: "t", anchor: .annotation("a"))), by: o, .calloutNotAllowed, field: "callout.anchor.annotation")
        #expect(w.session.callout == here)
    }

    @Test func annotationAnchorFollowsTheDraggedAnnotation() throws {
        var (w, o, e, _) = try trio()
        try w.add(point("a", at: C(10, 20), title: "A", draggable: true, canShowCallout: true, calloutOffset: Offset(dx: 0, dy: -20)), by: o)
        try w.ok(.showCallout(Callout(title: "A", anchor: .annotation("a"))), by: o)
        #expect(w.session.calloutCoordinate == C(10, 20))
        try w.drag("a", .starting, by: e)
        try w.drag("a", .dragging, C(11, 21), by: e)
        #expect(w.session.calloutCoordinate == C(11, 21))
        try w.drag("a", .dragging, C(12, 22), by: e)
        #expect(w.session.calloutCoordinate == C(12, 22))
        try w.drag("a", .canceling, by: e)
        #expect(w.session.calloutCoordinate == C(10, 20))
        #expect(w.session.callout?.anchor == .annotation("a"))
    }

    @Test func losingCanShowCalloutDismissesTheAnchoredCallout() throws {
        var (w, o, _, _) = try trio()
        try w.add(point("a", title: "A", canShowCallout: true), by: o)
        try w.ok(.showCallout(Callout(title: "A", anchor: .annotation("a"))), by: o)
        let events = try w.events(.updateAnnotation(id: "a", patch { $0.title = .some(nil) }), by: o)
        #expect(events == [.annotationUpdated(revised(point("a", canShowCallout: true), w.session.seq - 1)), .calloutHidden(reason: "annotation_changed")])
        #expect(w.session.callout == nil)
    }

    @Test func tapsNameTheAnchor() throws {
        var (w, o, _, v) = try trio()
        try w.add(point("a", title: "A", canShowCallout: true), by: o)
        let c = Callout(title: "A", accessory: .button(.infoLight), anchor: .annotation("a"))
        try w.ok(.showCallout(c), by: o)
        #expect(try w.events(.tapCallout(.body), by: v) == [.calloutTapped(.body, by: v, anchor: .annotation("a"))])
        #expect(try w.events(.tapCallout(.accessory), by: o) == [.calloutTapped(.accessory, by: o, anchor: .annotation("a"))])
        #expect(w.session.callout == c)
    }

    @Test func tapsNeedACalloutAndAnAccessory() throws {
        var (w, o, _, v) = try trio()
        try w.refuse(.tapCallout(.body), by: v, .notFound)
        try w.ok(.showCallout(Callout(title: "No button", anchor: .coordinate(C(0, 0)))), by: o)
        try w.refuse(.tapCallout(.accessory), by: v, .invalidField, field: "part")
        try w.ok(.tapCallout(.body), by: v)
    }

    @Test func participantAnchorNeedsALocationAndFollowsIt() throws {
        var (w, o, _, v) = try trio()
        try w.refuse(.showCallout(Callout(title: "Vi", anchor: .participant(v))), by: o, .calloutNotAllowed, field: "callout.anchor.participant")
        try w.ok(.location(UserLocation(coordinate: C(48.1, 11.5), accuracy: 10)), by: v)
        try w.ok(.showCallout(Callout(title: "Vi", anchor: .participant(v))), by: o)
        #expect(w.session.calloutCoordinate == C(48.1, 11.5))
        try w.ok(.location(UserLocation(coordinate: C(48.2, 11.6), accuracy: 10)), by: v)
        #expect(w.session.calloutCoordinate == C(48.2, 11.6))
    }

    @Test func participantLeavingDismissesItsCallout() throws {
        var (w, o, _, v) = try trio()
        try w.ok(.location(UserLocation(coordinate: C(48.1, 11.5), accuracy: 10)), by: v)
        try w.ok(.showCallout(Callout(title: "Vi", anchor: .participant(v))), by: o)
        let events = w.session.leave(v, reason: "closed", at: w.now).map(\.event)
        #expect(events == [.calloutHidden(reason: "participant_left"), .participantLeft(v, reason: "closed")])
        #expect(w.session.callout == nil)
    }

    @Test func clearingTheLocationDismissesItsCallout() throws {
        var (w, o, _, v) = try trio()
        try w.ok(.location(UserLocation(coordinate: C(48.1, 11.5), accuracy: 10)), by: v)
        try w.ok(.showCallout(Callout(title: "Vi", anchor: .participant(v))), by: o)
        #expect(try w.events(.location(nil), by: v) == [.location(v, nil), .calloutHidden(reason: "location_cleared")])
        #expect(w.session.callout == nil)
    }

    @Test func hiddenParticipantCannotBeAnAnchor() throws {
        var (w, o, _, _) = try trio()
        let h = try w.join("Dash", .viewer, hidden: true)
        try w.refuse(.showCallout(Callout(title: "h", anchor: .participant(h))), by: o, .notFound)
    }
}
