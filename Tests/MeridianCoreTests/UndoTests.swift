import Testing
@testable import MeridianCore

/// Annotations without their revisions: what an undo restores is the content, under a new revision.
func contentOf(_ annotations: [String: Annotation]) -> [String: Annotation] {
    annotations.mapValues { revised($0, 0) }
}

@Suite struct UndoTests {
    @Test func undoAndRedoOfAnAdd() throws {
        var (w, o, _, _) = try trio()
        try w.add(pin("a"), by: o)
        let undo = try w.ok(.undo, by: o).events
        #expect(undo.map(\.event) == [.undone(UndoMark(participant: o, annotation: "a", change: .add, redo: false)), .annotationRemoved("a")])
        #expect(w.annotation("a") == nil)
        let redo = try w.ok(.redo, by: o).events
        #expect(redo.first?.event == .undone(UndoMark(participant: o, annotation: "a", change: .add, redo: true)))
        // Back under a new revision: the seq of the event that brought it back.
        #expect(w.annotation("a") == revised(pin("a"), redo[1].seq))
        #expect(redo.map(\.event).last == .annotationAdded(revised(pin("a"), redo[1].seq)))
    }

    @Test func undoOfAnUpdateRestoresEveryField() throws {
        var (w, o, _, _) = try trio()
        try w.add(pin("a"), by: o)
        let original = w.annotation("a")!
        try w.ok(.updateAnnotation(id: "a", patch { $0.title = "Dock"; $0.kind = "truck"; $0.coordinate = C(1, 2) }), by: o)
        let changed = w.annotation("a")!
        let events = try w.events(.undo, by: o)
        #expect(events.count == 2)
        #expect(revised(w.annotation("a")!, 0) == revised(original, 0))
        #expect(w.annotation("a")!.revision == w.session.seq)
        try w.ok(.redo, by: o)
        #expect(revised(w.annotation("a")!, 0) == revised(changed, 0))
    }

    @Test func undoOfARemoveBringsTheAnnotationBack() throws {
        var (w, o, e, _) = try trio()
        try w.add(polygon("zone"), by: e)
        try w.ok(.removeAnnotation(id: "zone"), by: o)
        let events = try w.events(.undo, by: o)
        #expect(events.first == .undone(UndoMark(participant: o, annotation: "zone", change: .remove, redo: false)))
        #expect(revised(w.annotation("zone")!, 0) == polygon("zone"))
    }

    @Test func undoOfACommittedDragMovesItBack() throws {
        var (w, _, e, _) = try trio()
        try w.add(point("a", at: C(10, 20), draggable: true), by: e)
        try w.drag("a", .starting, by: e)
        try w.drag("a", .dragging, C(11, 21), by: e)
        try w.drag("a", .ending, by: e)
        #expect(w.coordinate("a") == C(11, 21))
        let events = try w.events(.undo, by: e)
        #expect(events.first == .undone(UndoMark(participant: e, annotation: "a", change: .drag, redo: false)))
        #expect(w.coordinate("a") == C(10, 20))
        try w.ok(.redo, by: e)
        #expect(w.coordinate("a") == C(11, 21))
    }

    @Test func undoReachesOnlyTheSendersOwnChanges() throws {
        var (w, o, e, _) = try trio()
        try w.add(pin("mine"), by: o)
        try w.add(pin("theirs"), by: e)
        try w.ok(.undo, by: o)
        #expect(w.annotation("mine") == nil)
        #expect(w.annotation("theirs") != nil)
        try w.refuse(.undo, by: o, .notFound)
    }

    @Test func aStepSomeoneElseChangedSinceIsRefusedAndForgotten() throws {
        var (w, o, e, _) = try trio()
        try w.add(pin("a"), by: o)
        try w.add(pin("b"), by: o)
        try w.ok(.updateAnnotation(id: "b", patch { $0.title = "mine" }), by: o)
        try w.ok(.updateAnnotation(id: "b", patch { $0.title = "theirs" }), by: e)
        let error = try w.refuse(.undo, by: o, .revisionConflict)
        #expect(error.annotation == w.annotation("b"))
        #expect(error.message.contains("annotation.update"))
        #expect(w.annotation("b")?.title == "theirs")
        // The refused step is gone: the next undo reaches the one before it (adding b), which is
        // refused too, b having changed since; then the add of a.
        try w.refuse(.undo, by: o, .revisionConflict)
        try w.ok(.undo, by: o)
        #expect(w.annotation("a") == nil)
        #expect(w.annotation("b")?.title == "theirs")
    }

    @Test func anUndoOfAnAddOfAnAnnotationSomeoneRemovedIsAConflictWithoutAnAnnotation() throws {
        var (w, o, e, _) = try trio()
        try w.add(pin("a"), by: o)
        try w.ok(.removeAnnotation(id: "a"), by: e)
        let error = try w.refuse(.undo, by: o, .revisionConflict)
        #expect(error.annotation == nil)
        #expect(error.message.contains("was removed"))
    }

    @Test func aNewChangeEmptiesTheRedoSteps() throws {
        var (w, o, _, _) = try trio()
        try w.add(pin("a"), by: o)
        try w.ok(.undo, by: o)
        try w.add(pin("b"), by: o)
        try w.refuse(.redo, by: o, .notFound)
    }

    @Test func rolesAreThoseOfTheChange() throws {
        var (w, o, _, v) = try trio()
        try w.add(pin("a"), by: o)
        try w.refuse(.undo, by: v, .forbidden)
    }

    @Test func anAnnotationBeingDraggedWaitsForTheDrag() throws {
        var (w, o, e, _) = try trio()
        try w.add(point("a", at: C(10, 20), draggable: true), by: o)
        try w.ok(.updateAnnotation(id: "a", patch { $0.title = "x" }), by: o)
        try w.drag("a", .starting, by: e)
        try w.refuse(.undo, by: o, .beingDragged)
        try w.drag("a", .canceling, by: e)
        // Kept: a canceled drag changed nothing.
        try w.ok(.undo, by: o)
        #expect(w.annotation("a")?.title == nil)
    }

    @Test func historiesAreBounded() throws {
        var w = World(limits: { $0.maxUndoSteps = 3; $0.maxAbsentHistories = 1 })
        let p = try w.join("P")
        for i in 0..<5 { try w.add(pin("a\(i)"), by: p) }
        #expect(w.session.histories[p]?.undo.map(\.annotation) == ["a2", "a3", "a4"])
        // Two participants leave with histories: only the one changed last is kept.
        let q = try w.join("Q")
        try w.add(pin("q"), by: q)
        _ = w.session.leave(p, reason: "left", at: w.now)
        _ = w.session.leave(q, reason: "left", at: w.now)
        #expect(Set(w.session.histories.keys) == [q])
    }

    @Test func aJoinerTakesOverTheHistoryOfItsEarlierConnection() throws {
        var w = World()
        let first = try w.join("Ann")
        try w.add(pin("a"), by: first)
        _ = w.session.leave(first, reason: "connection_lost", at: w.now)
        guard case .success(let (second, _)) = w.session.join(JoinRequest(name: "Ann", role: .editor, previous: first), at: w.now) else {
            Issue.record("join refused")
            return
        }
        #expect(second != first)
        try w.ok(.undo, by: second)
        #expect(w.annotation("a") == nil)
    }

    @Test func aJoinerCannotTakeTheHistoryOfSomeoneStillThere() throws {
        var w = World()
        let first = try w.join("Ann")
        try w.add(pin("a"), by: first)
        guard case .success(let (other, _)) = w.session.join(JoinRequest(name: "Mallory", role: .editor, previous: first), at: w.now) else {
            Issue.record("join refused")
            return
        }
        try w.refuse(.undo, by: other, .notFound)
        try w.ok(.undo, by: first)
    }

    @Test func historiesAreInTheDurableRecord() throws {
        var (w, o, _, _) = try trio()
        try w.add(pin("a"), by: o)
        try w.ok(.updateAnnotation(id: "a", patch { $0.title = "t" }), by: o)
        var restored = World(Session(restoring: w.session.record, epoch: "e2"))
        // A newcomer does not get the id, nor the history, of an earlier participant.
        let stranger = try restored.join("Stranger", .owner)
        #expect(stranger != o)
        try restored.refuse(.undo, by: stranger, .notFound)
        guard case .success(let (pid, _)) = restored.session.join(JoinRequest(name: "Olive", role: .owner, previous: o), at: restored.now) else {
            Issue.record("join refused")
            return
        }
        try restored.ok(.undo, by: pid)
        #expect(restored.annotation("a")?.title == nil)
    }

    /// Ids assigned without tokens are unique within an epoch; a later epoch starts past every id
    /// that has a history, but may assign again one that had none. A client of the earlier epoch
    /// that names such an id as `previousParticipant` (its `resume.epoch` the old one) names
    /// someone else: it does not get the newer participant's history. The newer participant's own
    /// reconnect, resuming this epoch, does.
    @Test func anIdAssignedAgainInALaterEpochKeepsItsHistoryFromTheEarlierEpochsClient() throws {
        var w = World()
        let owner = try w.join("Owner", .owner)
        try w.add(pin("a"), by: owner)
        let quiet = try w.join("Quiet", .viewer)
        var restored = World(Session(restoring: w.session.record, epoch: "e2"))
        let newcomer = try restored.join("Newcomer")
        #expect(newcomer == quiet, "ids without a history may come again")
        try restored.add(pin("b"), by: newcomer)
        _ = restored.session.leave(newcomer, reason: "connection_lost", at: restored.now)

        guard case .success(let (old, _)) = restored.session.join(
            JoinRequest(name: "Quiet", role: .editor, previous: quiet, previousEpoch: "e1"), at: restored.now) else {
            Issue.record("join refused")
            return
        }
        try restored.refuse(.undo, by: old, .notFound)
        guard case .success(let (back, _)) = restored.session.join(
            JoinRequest(name: "Newcomer", role: .editor, previous: newcomer, previousEpoch: "e2"), at: restored.now) else {
            Issue.record("join refused")
            return
        }
        try restored.ok(.undo, by: back)
        #expect(restored.annotation("b") == nil)
        // The owner's id has a history: it was not assigned again, and its client still finds it.
        guard case .success(let (owner2, _)) = restored.session.join(
            JoinRequest(name: "Owner", role: .owner, previous: owner, previousEpoch: "e1"), at: restored.now) else {
            Issue.record("join refused")
            return
        }
        try restored.ok(.undo, by: owner2)
        #expect(restored.annotation("a") == nil)
    }

    @Test func storageIsToldWhichHistoriesChanged() throws {
        var (w, o, e, _) = try trio()
        _ = w.session.takeChangedHistories()
        try w.add(pin("a"), by: o)
        try w.add(pin("b"), by: e)
        let changed = w.session.takeChangedHistories()
        #expect(Set(changed.keys) == [o, e])
        #expect(changed[o]??.undo.map(\.annotation) == ["a"])
        #expect(w.session.takeChangedHistories().isEmpty)
    }
}

@Suite struct UndoChainTests {
    @Test func severalOwnChangesOfOneAnnotationUndoAndRedoInTurn() throws {
        var (w, o, _, _) = try trio()
        try w.add(pin("a"), by: o)
        try w.ok(.updateAnnotation(id: "a", patch { $0.title = "1" }), by: o)
        try w.ok(.updateAnnotation(id: "a", patch { $0.title = "2" }), by: o)
        try w.ok(.undo, by: o)
        #expect(w.annotation("a")?.title == "1")
        try w.ok(.undo, by: o)
        #expect(w.annotation("a")?.title == nil)
        try w.ok(.undo, by: o)
        #expect(w.annotation("a") == nil)
        try w.ok(.redo, by: o)
        try w.ok(.redo, by: o)
        try w.ok(.redo, by: o)
        #expect(w.annotation("a")?.title == "2")
        try w.refuse(.redo, by: o, .notFound)
    }

    @Test func aRemoveAndAnAddOfTheSameIdUndoInTurn() throws {
        var (w, o, _, _) = try trio()
        try w.add(pin("a"), by: o)
        try w.ok(.removeAnnotation(id: "a"), by: o)
        try w.add(polygon("a"), by: o)
        try w.ok(.undo, by: o)
        #expect(w.annotation("a") == nil)
        try w.ok(.undo, by: o)
        #expect(w.annotation("a")?.point != nil)
        try w.ok(.undo, by: o)
        #expect(w.annotation("a") == nil)
        for _ in 0..<3 { try w.ok(.redo, by: o) }
        #expect(w.annotation("a").map { revised($0, 0) } == polygon("a"))
    }
}

@Suite struct UndoJoinTests {
    @Test func aJoinNamingAnInvalidEarlierIdIsRefused() throws {
        var w = World()
        guard case .failure(let error) = w.session.join(JoinRequest(name: "Ann", role: .editor, previous: ""), at: w.now) else {
            Issue.record("join accepted")
            return
        }
        #expect(error.code == .invalidField && error.field == "previousParticipant")
        #expect(w.session.participants.isEmpty)
    }
}
