import Testing
@testable import MeridianCore

/// The seq of the one event of `events` that `matches`.
private func seq(of events: [Emitted], _ matches: (Event) -> Bool) throws -> UInt64 {
    let found = events.filter { matches($0.event) }
    try #require(found.count == 1, "expected one matching event in \(events.map(\.event))")
    return found[0].seq
}

private func isAdded(_ e: Event) -> Bool { if case .annotationAdded = e { true } else { false } }
private func isUpdated(_ e: Event) -> Bool { if case .annotationUpdated = e { true } else { false } }
private func isEnding(_ e: Event) -> Bool { if case .drag(_, _, .ending, _, _) = e { true } else { false } }

@Suite struct RevisionTests {
    @Test func addUpdateAndEndingSetTheRevisionToTheirEventsSeq() throws {
        var (w, o, e, _) = try trio()
        let added = try w.ok(.addAnnotation(pin("a")), by: o).events
        let addSeq = try seq(of: added, isAdded)
        #expect(w.annotation("a")?.revision == addSeq)
        #expect(added.first?.event == .annotationAdded(w.annotation("a")!), "the event carries the revision")

        let updated = try w.ok(.updateAnnotation(id: "a", patch { $0.title = "Quay" }), by: e).events
        let updateSeq = try seq(of: updated, isUpdated)
        #expect(updateSeq > addSeq)
        #expect(w.annotation("a")?.revision == updateSeq)
        guard case .annotationUpdated(let sent) = updated.last?.event else { Issue.record("no update event"); return }
        #expect(sent.revision == updateSeq)

        // Starting and moves (the first discrete, later ones transient) do not change it.
        try w.drag("a", .starting, by: e)
        try w.drag("a", .dragging, C(11, 21), by: e)
        try w.drag("a", .dragging, C(12, 22), by: e)
        #expect(w.annotation("a")?.revision == updateSeq)
        #expect(w.session.committedAnnotation("a")?.revision == updateSeq)

        let ended = try w.ok(.drag(annotation: "a", state: .ending, coordinate: nil), by: e).events
        let endSeq = try seq(of: ended, isEnding)
        #expect(w.annotation("a")?.revision == endSeq)
        #expect(ended.last.map { $0.seq } == endSeq + 1, "the none after it changes nothing more")
    }

    @Test func aCanceledDragLeavesTheRevision() throws {
        var (w, o, e, _) = try trio()
        try w.add(pin("a"), by: o)
        let before = try #require(w.annotation("a")?.revision)
        try w.drag("a", .starting, by: e)
        try w.drag("a", .dragging, C(11, 21), by: e)
        try w.drag("a", .canceling, by: e)
        #expect(w.annotation("a")?.revision == before)
        // So does a drag the server cancels.
        try w.drag("a", .starting, by: e)
        w.advance(.seconds(60))
        #expect(!w.session.expireDrags(at: w.now).isEmpty)
        #expect(w.annotation("a")?.revision == before)
    }

    @Test func anUpdateThatCancelsDragsGetsTheSeqOfItsUpdatedEvent() throws {
        var (w, o, e, _) = try trio()
        try w.add(pin("a"), by: o)
        try w.drag("a", .starting, by: e)
        let events = try w.ok(.updateAnnotation(id: "a", patch { $0.draggable = false }), by: o).events
        #expect(events.count == 3, "canceling, none, then the update: \(events.map(\.event))")
        let updateSeq = try seq(of: events, isUpdated)
        #expect(w.annotation("a")?.revision == updateSeq)
    }

    @Test func aRemovedAndAddedAgainAnnotationStartsFromItsNewAdd() throws {
        var (w, o, _, _) = try trio()
        try w.add(pin("a"), by: o)
        try w.ok(.updateAnnotation(id: "a", patch { $0.title = "T" }), by: o)
        try w.ok(.removeAnnotation(id: "a"), by: o)
        let again = try w.ok(.addAnnotation(pin("a")), by: o).events
        let addSeq = try seq(of: again, isAdded)
        #expect(w.annotation("a")?.revision == addSeq)
    }

    @Test func theSessionNumbersAddedAnnotationsWhateverTheCommandCarried() throws {
        var (w, o, _, _) = try trio()
        var a = pin("a")
        a.revision = 999
        let events = try w.ok(.addAnnotation(a), by: o).events
        #expect(w.annotation("a")?.revision == events[0].seq)
    }

    @Test func conditionalUpdate() throws {
        var (w, o, e, _) = try trio()
        try w.add(pin("a"), by: o)
        let seen = try #require(w.annotation("a")?.revision)
        try w.ok(.updateAnnotation(id: "a", patch { $0.title = "Mine" }, ifRevision: seen), by: e)
        let current = try #require(w.annotation("a"))
        #expect(current.title == "Mine")

        // The owner saw only the add: its update is refused, naming the field, with the annotation as it is now.
        let error = try w.refuse(.updateAnnotation(id: "a", patch { $0.title = "Theirs" }, ifRevision: seen), by: o, .revisionConflict, field: "ifRevision")
        #expect(error.annotation == current)
        #expect(error.annotation?.revision == current.revision)
        #expect(error.message.contains("annotation.update"), "\(error.message)")
        #expect(error.message.contains("\(seen)") && error.message.contains("\(current.revision)"), "\(error.message)")
        // With what it now knows, it succeeds.
        try w.ok(.updateAnnotation(id: "a", patch { $0.title = "Theirs" }, ifRevision: current.revision), by: o)
        #expect(w.annotation("a")?.title == "Theirs")
    }

    @Test func conditionalRemove() throws {
        var (w, o, e, _) = try trio()
        try w.add(pin("a"), by: o)
        let seen = try #require(w.annotation("a")?.revision)
        try w.ok(.updateAnnotation(id: "a", patch { $0.zIndex = 3 }), by: e)
        let error = try w.refuse(.removeAnnotation(id: "a", ifRevision: seen), by: o, .revisionConflict, field: "ifRevision")
        #expect(error.annotation == w.annotation("a"))
        #expect(error.message.contains("annotation.remove"), "\(error.message)")
        let current = try #require(w.annotation("a")?.revision)
        let events = try w.events(.removeAnnotation(id: "a", ifRevision: current), by: o)
        #expect(events == [.annotationRemoved("a")])
    }

    @Test func conditionalDragStart() throws {
        var (w, o, e, _) = try trio()
        try w.add(pin("a"), by: o)
        let seen = try #require(w.annotation("a")?.revision)
        try w.drag("a", .starting, by: e)
        try w.drag("a", .dragging, C(1, 2), by: e)
        try w.drag("a", .ending, by: e)
        // The owner did not see the drag that moved it.
        let error = try w.refuse(.drag(annotation: "a", state: .starting, coordinate: nil, ifRevision: seen), by: o, .revisionConflict, field: "ifRevision")
        #expect(error.annotation?.point?.coordinate == C(1, 2))
        #expect(error.message.contains("drag"), "\(error.message)")
        let current = try #require(w.annotation("a")?.revision)
        let events = try w.events(.drag(annotation: "a", state: .starting, coordinate: nil, ifRevision: current), by: o)
        #expect(dragSteps(events).map(\.state) == [.starting])
    }

    @Test func aConditionalStartIsCheckedBeforeTheDragPolicy() throws {
        var (w, o, e, _) = try trio()
        try w.add(pin("a"), by: o)
        let seen = try #require(w.annotation("a")?.revision)
        try w.ok(.updateAnnotation(id: "a", patch { $0.title = "T" }), by: o)
        try w.drag("a", .starting, by: e)
        try w.refuse(.drag(annotation: "a", state: .starting, coordinate: nil, ifRevision: seen), by: o, .revisionConflict)
        let current = try #require(w.annotation("a")?.revision)
        try w.refuse(.drag(annotation: "a", state: .starting, coordinate: nil, ifRevision: current), by: o, .dragConflict)
    }

    @Test func onlyAStartingDragTakesIfRevision() throws {
        var (w, o, e, _) = try trio()
        try w.add(pin("a"), by: o)
        let current = try #require(w.annotation("a")?.revision)
        try w.drag("a", .starting, by: e)
        for (state, c) in [(DragState.dragging, C(1, 1) as Coordinate?), (.ending, nil), (.canceling, nil)] {
            try w.refuse(.drag(annotation: "a", state: state, coordinate: c, ifRevision: current), by: e, .invalidField, field: "ifRevision")
        }
    }

    @Test func roleAndExistenceAreCheckedFirst() throws {
        var (w, o, _, v) = try trio()
        try w.add(pin("a"), by: o)
        try w.refuse(.updateAnnotation(id: "a", patch { $0.title = "T" }, ifRevision: 999), by: v, .forbidden)
        try w.refuse(.removeAnnotation(id: "nope", ifRevision: 1), by: o, .notFound, field: "id")
        try w.refuse(.drag(annotation: "nope", state: .starting, coordinate: nil, ifRevision: 1), by: o, .notFound, field: "id")
    }

    @Test func revisionsSurviveTheRecord() throws {
        var (w, o, e, _) = try trio()
        try w.add(pin("a"), by: o)
        try w.add(polyline("l"), by: o)
        try w.ok(.updateAnnotation(id: "l", patch { $0.lineWidth = 5 }), by: o)
        try w.drag("a", .starting, by: e)
        try w.drag("a", .dragging, C(3, 3), by: e)
        try w.drag("a", .ending, by: e)
        let revisions = w.session.annotations.mapValues(\.revision)
        // A drag in progress: the record keeps the committed annotation, revision and all.
        try w.drag("a", .starting, by: e)
        try w.drag("a", .dragging, C(4, 4), by: e)
        let restored = Session(restoring: w.session.record, epoch: "e2")
        #expect(restored.annotations.mapValues(\.revision) == revisions)
        #expect(restored.annotations["a"]?.point?.coordinate == C(3, 3))
    }
}
