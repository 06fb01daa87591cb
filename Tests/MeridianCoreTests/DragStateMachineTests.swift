import Testing
@testable import MeridianCore

/// The legal drag transitions of DOMAIN.md.
let legalDragTransitions: Set<[DragState]> = [
    [.none, .starting], [.starting, .dragging], [.starting, .canceling], [.dragging, .dragging],
    [.dragging, .ending], [.dragging, .canceling], [.ending, .none], [.canceling, .none],
]

let allDragPairs: [(DragState, DragState)] = DragState.allCases.flatMap { from in DragState.allCases.map { (from, $0) } }

@Suite struct DragStateMachineTests {
    static let start = C(10, 20)

    func world() throws -> (World, owner: ParticipantID, editor: ParticipantID, viewer: ParticipantID) {
        var (w, o, e, v) = try trio()
        try w.add(pin("a", at: Self.start), by: o)
        return (w, o, e, v)
    }

    @Test(arguments: allDragPairs)
    func transitionTableMatchesTheDomain(from: DragState, to: DragState) {
        #expect(from.canMove(to: to) == legalDragTransitions.contains([from, to]))
    }

    @Test func startingIsDiscreteAndCarriesTheCurrentCoordinate() throws {
        var (w, _, e, _) = try world()
        let seq = w.session.seq
        let out = try w.ok(.drag(annotation: "a", state: .starting, coordinate: nil), by: e).events
        #expect(out.map(\.event) == [.drag(annotation: "a", participant: e, state: .starting, coordinate: Self.start, reason: nil)])
        #expect(out.map(\.seq) == [seq + 1])
        #expect(out.allSatisfy { !$0.isTransient })
        #expect(w.session.dragState(of: "a", by: e) == .starting)
        #expect(w.session.drags["a"]?.origin == Self.start)
    }

    @Test func firstMoveIsDiscreteLaterMovesAreTransient() throws {
        var (w, _, e, _) = try world()
        try w.drag("a", .starting, by: e)
        let seq = w.session.seq
        let first = try w.ok(.drag(annotation: "a", state: .dragging, coordinate: C(11, 21)), by: e).events
        #expect(first.map(\.event) == [.drag(annotation: "a", participant: e, state: .dragging, coordinate: C(11, 21), reason: nil)])
        #expect(first.map(\.seq) == [seq + 1])
        #expect(first[0].conflation == nil)
        #expect(w.coordinate("a") == C(11, 21))
        #expect(w.session.dragState(of: "a", by: e) == .dragging)
        let later = try w.ok(.drag(annotation: "a", state: .dragging, coordinate: C(12, 22)), by: e).events
        #expect(later.map(\.seq) == [seq + 1])
        #expect(later.map(\.conflation) == [.dragMove(annotation: "a", participant: e)])
        #expect(w.coordinate("a") == C(12, 22))
        #expect(w.session.seq == seq + 1)
    }

    @Test func endingCommitsTheLastCoordinate() throws {
        var (w, _, e, _) = try world()
        try w.drag("a", .starting, by: e)
        try w.drag("a", .dragging, C(11, 21), by: e)
        try w.drag("a", .dragging, C(12, 22), by: e)
        let seq = w.session.seq
        let out = try w.ok(.drag(annotation: "a", state: .ending, coordinate: nil), by: e).events
        #expect(dragSteps(out.map(\.event)) == [
            DragStep(annotation: "a", participant: e, state: .ending, coordinate: C(12, 22)),
            DragStep(annotation: "a", participant: e, state: .none, coordinate: C(12, 22)),
        ])
        #expect(out.map(\.seq) == [seq + 1, seq + 2])
        #expect(w.coordinate("a") == C(12, 22))
        #expect(w.session.drags["a"] == nil)
        #expect(w.session.dragState(of: "a", by: e) == .none)
    }

    @Test func endingCommitsItsOwnCoordinateWhenGiven() throws {
        var (w, _, e, _) = try world()
        try w.drag("a", .starting, by: e)
        try w.drag("a", .dragging, C(11, 21), by: e)
        let out = try w.drag("a", .ending, C(13, 23), by: e)
        #expect(dragSteps(out).map(\.coordinate) == [C(13, 23), C(13, 23)])
        #expect(w.coordinate("a") == C(13, 23))
    }

    @Test(arguments: [[DragState.starting], [.starting, .dragging], [.starting, .dragging, .dragging]])
    func cancelingRestoresTheStartCoordinate(path: [DragState]) throws {
        var (w, _, e, _) = try world()
        for (i, s) in path.enumerated() { try w.drag("a", s, C(30 + Double(i), 40), by: e) }
        let out = try w.drag("a", .canceling, by: e)
        #expect(dragSteps(out) == [
            DragStep(annotation: "a", participant: e, state: .canceling, coordinate: Self.start),
            DragStep(annotation: "a", participant: e, state: .none, coordinate: Self.start),
        ])
        #expect(w.coordinate("a") == Self.start)
        #expect(w.session.drags["a"] == nil)
    }

    /// Sets up `from` for the editor (where a client can hold it) and checks
    /// that every transition outside the legal set is refused, unchanged.
    @Test(arguments: allDragPairs.filter { !legalDragTransitions.contains([$0.0, $0.1]) })
    func illegalTransitionIsRefused(from: DragState, to: DragState) throws {
        var (w, _, e, _) = try world()
        switch from {
        case .none: break
        case .starting: try w.drag("a", .starting, by: e)
        case .dragging: try w.drag("a", .starting, by: e); try w.drag("a", .dragging, C(1, 1), by: e)
        case .ending, .canceling:
            // The server completes ending/canceling with none at once: the
            // client is back at none and only none's transitions apply.
            try w.drag("a", .starting, by: e)
            try w.drag("a", .dragging, C(1, 1), by: e)
            try w.drag("a", from, by: e)
            #expect(w.session.dragState(of: "a", by: e) == .none)
        }
        let current = w.session.dragState(of: "a", by: e)
        guard !current.canMove(to: to) || to == .none else { return }
        try w.refuse(.drag(annotation: "a", state: to, coordinate: C(2, 2)), by: e, .illegalDragTransition, field: "state")
    }

    @Test func startingToNoneIsNeverAllowed() throws {
        var (w, _, e, _) = try world()
        try w.drag("a", .starting, by: e)
        let err = try w.refuse(.drag(annotation: "a", state: .none, coordinate: nil), by: e, .illegalDragTransition)
        #expect(err.message.contains("starting → none"))
        #expect(w.session.dragState(of: "a", by: e) == .starting)
    }

    @Test func clientNeverSendsNone() throws {
        var (w, _, e, _) = try world()
        try w.refuse(.drag(annotation: "a", state: .none, coordinate: nil), by: e, .illegalDragTransition)
        try w.drag("a", .starting, by: e)
        try w.drag("a", .dragging, C(1, 1), by: e)
        try w.refuse(.drag(annotation: "a", state: .none, coordinate: nil), by: e, .illegalDragTransition)
    }

    @Test func moveNeedsAValidCoordinate() throws {
        var (w, _, e, _) = try world()
        try w.drag("a", .starting, by: e)
        try w.refuse(.drag(annotation: "a", state: .dragging, coordinate: nil), by: e, .invalidField, field: "coordinate")
        try w.refuse(.drag(annotation: "a", state: .dragging, coordinate: C(.nan, 0)), by: e, .invalidField, field: "coordinate.latitude")
        try w.refuse(.drag(annotation: "a", state: .dragging, coordinate: C(0, 999)), by: e, .invalidField, field: "coordinate.longitude")
    }

    @Test func onlyDraggableEnabledPointsByEditorsAndOwners() throws {
        var (w, o, e, v) = try world()
        try w.add(point("fixed"), by: o)
        try w.add(point("off", draggable: true).with { $0.enabled = false }, by: o)
        try w.add(polyline("line"), by: o)
        for id in ["fixed", "off", "line"] {
            try w.refuse(.drag(annotation: id, state: .starting, coordinate: nil), by: e, .notDraggable, field: "id")
        }
        try w.refuse(.drag(annotation: "nope", state: .starting, coordinate: nil), by: e, .notFound)
        try w.refuse(.drag(annotation: "a", state: .starting, coordinate: nil), by: v, .forbidden)
        try w.drag("a", .starting, by: o)
        try w.drag("a", .canceling, by: o)
        try w.drag("a", .starting, by: e)
    }

    @Test func anotherParticipantsCoordinateEditIsRefusedDuringADrag() throws {
        var (w, o, e, _) = try world()
        try w.drag("a", .starting, by: e)
        try w.drag("a", .dragging, C(11, 21), by: e)
        let err = try w.refuse(.updateAnnotation(id: "a", patch { $0.coordinate = C(0, 0) }), by: o, .beingDragged, field: "changes.coordinate")
        #expect(err.holder == e)
        // Other fields may change; the live coordinate stays.
        try w.ok(.updateAnnotation(id: "a", patch { $0.title = "Moving" }), by: o)
        #expect(w.coordinate("a") == C(11, 21))
        #expect(w.annotation("a")?.title == "Moving")
        try w.drag("a", .ending, by: e)
        try w.ok(.updateAnnotation(id: "a", patch { $0.coordinate = C(0, 0) }), by: o)
        #expect(w.coordinate("a") == C(0, 0))
    }

    @Test func makingTheAnnotationUndraggableCancelsTheDrag() throws {
        var (w, o, e, _) = try world()
        try w.drag("a", .starting, by: e)
        try w.drag("a", .dragging, C(11, 21), by: e)
        let events = try w.events(.updateAnnotation(id: "a", patch { $0.draggable = false }), by: o)
        #expect(events == [
            .drag(annotation: "a", participant: e, state: .canceling, coordinate: Self.start, reason: .annotationChanged),
            .drag(annotation: "a", participant: e, state: .none, coordinate: Self.start, reason: .annotationChanged),
            .annotationUpdated(revised(point("a", at: Self.start), w.session.seq)),
        ])
        #expect(w.session.drags.isEmpty)
        #expect(w.coordinate("a") == Self.start)
    }

    @Test func removingCancelsEveryDrag() throws {
        var (w, o, e, _) = try trio(SessionSettings(dragPolicy: .lastWriterWins))
        try w.add(pin("a", at: Self.start), by: o)
        try w.drag("a", .starting, by: e)
        try w.drag("a", .starting, by: o)
        try w.drag("a", .dragging, C(5, 5), by: o)
        let steps = dragSteps(try w.events(.removeAnnotation(id: "a"), by: o))
        #expect(steps.map(\.state) == [.canceling, .none, .canceling, .none])
        #expect(Set(steps.map(\.participant)) == [o, e])
        #expect(steps.allSatisfy { $0.reason == .annotationRemoved })
        #expect(steps.last?.coordinate == Self.start)
        #expect(w.session.drags.isEmpty)
    }
}

extension Annotation {
    func with(_ change: (inout Annotation) -> Void) -> Annotation {
        var a = self
        change(&a)
        return a
    }
}
