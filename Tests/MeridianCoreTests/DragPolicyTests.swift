import Testing
@testable import MeridianCore

@Suite struct ExclusivePolicyTests {
    static let start = C(10, 20)

    func world(_ policy: DragPolicy = .exclusive) throws -> (World, owner: ParticipantID, editor: ParticipantID, editor2: ParticipantID) {
        var w = World(SessionSettings(dragPolicy: policy, leaseTimeout: .seconds(10)))
        let o = try w.join("Olive", .owner)
        let e = try w.join("Ed", .editor)
        let e2 = try w.join("Eve", .editor)
        try w.add(pin("a", at: Self.start), by: o)
        return (w, o, e, e2)
    }

    @Test(arguments: [DragPolicy.exclusive, .priority])
    func secondStarterIsRefusedNamingTheHolder(policy: DragPolicy) throws {
        var (w, o, e, e2) = try world(policy)
        try w.drag("a", .starting, by: e)
        let err = try w.refuse(.drag(annotation: "a", state: .starting, coordinate: nil), by: e2, .dragConflict)
        #expect(err.holder == e)
        #expect(err.message.contains("Ed"))
        try w.drag("a", .dragging, C(1, 1), by: e)
        #expect(try w.refuse(.drag(annotation: "a", state: .starting, coordinate: nil), by: e2, .dragConflict).holder == e)
        if policy == .exclusive {
            // Under exclusive even an owner waits.
            #expect(try w.refuse(.drag(annotation: "a", state: .starting, coordinate: nil), by: o, .dragConflict).holder == e)
        }
        try w.drag("a", .ending, by: e)
        try w.drag("a", .starting, by: e2)
        #expect(w.session.drags["a"]?.drags.map(\.participant) == [e2])
    }

    @Test func leaseExpiresAfterIdleTimeoutAndRestoresTheCoordinate() throws {
        var (w, _, e, e2) = try world()
        try w.drag("a", .starting, by: e)
        w.advance(.seconds(2))
        try w.drag("a", .dragging, C(11, 21), by: e)
        #expect(w.session.nextDragExpiry == .seconds(12))
        #expect(w.session.expireDrags(at: .milliseconds(11_999)) == [])
        #expect(w.session.dragState(of: "a", by: e) == .dragging)
        let seq = w.session.seq
        let out = w.session.expireDrags(at: .seconds(12))
        #expect(dragSteps(out.map(\.event)) == [
            DragStep(annotation: "a", participant: e, state: .canceling, coordinate: Self.start, reason: .leaseExpired),
            DragStep(annotation: "a", participant: e, state: .none, coordinate: Self.start, reason: .leaseExpired),
        ])
        #expect(out.map(\.seq) == [seq + 1, seq + 2])
        #expect(w.coordinate("a") == Self.start)
        #expect(w.session.drags.isEmpty)
        #expect(w.session.nextDragExpiry == nil)
        // The lease is free again; the expired holder's moves are refused.
        w.advance(.seconds(11))
        try w.refuse(.drag(annotation: "a", state: .dragging, coordinate: C(1, 1)), by: e, .illegalDragTransition)
        try w.drag("a", .starting, by: e2)
    }

    @Test func startingAloneExpiresToo() throws {
        var (w, _, e, _) = try world()
        try w.drag("a", .starting, by: e)
        #expect(w.session.nextDragExpiry == .seconds(10))
        #expect(dragSteps(w.session.expireDrags(at: .seconds(10)).map(\.event)).map(\.reason) == [.leaseExpired, .leaseExpired])
    }

    @Test func movesRefreshTheLease() throws {
        var (w, _, e, _) = try world()
        try w.drag("a", .starting, by: e)
        for i in 1...5 {
            w.advance(.seconds(8))
            #expect(w.session.expireDrags(at: w.now) == [])
            try w.drag("a", .dragging, C(Double(i), 0), by: e)
        }
        #expect(w.session.nextDragExpiry == w.now + .seconds(10))
        try w.drag("a", .ending, by: e)
        #expect(w.coordinate("a") == C(5, 0))
    }

    @Test func holderLeavingCancelsTheDrag() throws {
        var (w, _, e, e2) = try world()
        try w.drag("a", .starting, by: e)
        try w.drag("a", .dragging, C(11, 21), by: e)
        let events = w.session.leave(e, reason: "closed", at: w.now).map(\.event)
        #expect(events == [
            .drag(annotation: "a", participant: e, state: .canceling, coordinate: Self.start, reason: .holderLeft),
            .drag(annotation: "a", participant: e, state: .none, coordinate: Self.start, reason: .holderLeft),
            .participantLeft(e, reason: "closed"),
        ])
        #expect(w.coordinate("a") == Self.start)
        try w.drag("a", .starting, by: e2)
    }

    @Test func dragsOfDifferentAnnotationsAreIndependent() throws {
        var (w, o, e, e2) = try world()
        try w.add(pin("b"), by: o)
        try w.drag("a", .starting, by: e)
        try w.drag("b", .starting, by: e2)
        #expect(try w.refuse(.drag(annotation: "b", state: .starting, coordinate: nil), by: o, .dragConflict).holder == e2)
        #expect(try w.refuse(.drag(annotation: "a", state: .starting, coordinate: nil), by: e2, .dragConflict).holder == e)
        try w.drag("b", .dragging, C(3, 3), by: e2)
        try w.drag("a", .canceling, by: e)
        #expect(w.coordinate("b") == C(3, 3))
        #expect(w.session.dragState(of: "b", by: e2) == .dragging)
    }
}

@Suite struct PriorityPolicyTests {
    static let start = C(10, 20)

    func world() throws -> (World, owner: ParticipantID, editor: ParticipantID, owner2: ParticipantID) {
        var w = World(policy: .priority)
        let o = try w.join("Olive", .owner)
        let e = try w.join("Ed", .editor)
        let o2 = try w.join("Otto", .owner)
        try w.add(pin("a", at: Self.start), by: o)
        return (w, o, e, o2)
    }

    @Test func ownerPreemptsAnEditor() throws {
        var (w, o, e, _) = try world()
        try w.drag("a", .starting, by: e)
        try w.drag("a", .dragging, C(11, 21), by: e)
        let events = try w.drag("a", .starting, by: o)
        #expect(events == [
            .drag(annotation: "a", participant: e, state: .canceling, coordinate: Self.start, reason: .preempted),
            .drag(annotation: "a", participant: e, state: .none, coordinate: Self.start, reason: .preempted),
            .drag(annotation: "a", participant: o, state: .starting, coordinate: Self.start, reason: nil),
        ])
        #expect(w.session.drags["a"]?.drags.map(\.participant) == [o])
        #expect(w.session.dragState(of: "a", by: e) == .none)
        #expect(w.coordinate("a") == Self.start)
        // The preempted editor's moves are refused; it cannot take the drag back.
        try w.refuse(.drag(annotation: "a", state: .dragging, coordinate: C(1, 1)), by: e, .illegalDragTransition)
        #expect(try w.refuse(.drag(annotation: "a", state: .starting, coordinate: nil), by: e, .dragConflict).holder == o)
    }

    @Test func preemptingOwnersDragStartsFromTheRestoredCoordinate() throws {
        var (w, o, e, _) = try world()
        try w.drag("a", .starting, by: e)
        try w.drag("a", .dragging, C(11, 21), by: e)
        try w.drag("a", .starting, by: o)
        #expect(w.session.drags["a"]?.origin == Self.start)
        try w.drag("a", .dragging, C(30, 30), by: o)
        let steps = dragSteps(try w.drag("a", .canceling, by: o))
        #expect(steps.map(\.coordinate) == [Self.start, Self.start])
        #expect(w.coordinate("a") == Self.start)
    }

    @Test func editorCannotPreemptAnOwnerNorAnOwnerAnotherOwner() throws {
        var (w, o, e, o2) = try world()
        try w.drag("a", .starting, by: o)
        #expect(try w.refuse(.drag(annotation: "a", state: .starting, coordinate: nil), by: e, .dragConflict).holder == o)
        #expect(try w.refuse(.drag(annotation: "a", state: .starting, coordinate: nil), by: o2, .dragConflict).holder == o)
    }

    @Test func preemptedLeaseStillExpires() throws {
        var (w, o, e, _) = try world()
        try w.drag("a", .starting, by: e)
        w.advance(.seconds(4))
        try w.drag("a", .starting, by: o)
        #expect(w.session.nextDragExpiry == .seconds(14))
        #expect(dragSteps(w.session.expireDrags(at: .seconds(14)).map(\.event)).map(\.participant) == [o, o])
    }
}

@Suite struct LastWriterWinsPolicyTests {
    static let start = C(10, 20)

    func world() throws -> (World, ParticipantID, ParticipantID, ParticipantID) {
        var w = World(policy: .lastWriterWins)
        let o = try w.join("Olive", .owner)
        let e = try w.join("Ed", .editor)
        let e2 = try w.join("Eve", .editor)
        try w.add(pin("a", at: Self.start), by: o)
        return (w, o, e, e2)
    }

    @Test func severalDraggersMovesApplyInOrderLastEndingDecides() throws {
        var (w, o, e, e2) = try world()
        try w.drag("a", .starting, by: e)
        try w.drag("a", .starting, by: e2)
        try w.drag("a", .starting, by: o)
        #expect(w.session.drags["a"]?.drags.map(\.participant) == [e, e2, o])
        try w.drag("a", .dragging, C(1, 1), by: e)
        #expect(w.coordinate("a") == C(1, 1))
        try w.drag("a", .dragging, C(2, 2), by: e2)
        #expect(w.coordinate("a") == C(2, 2))
        try w.drag("a", .dragging, C(3, 3), by: e)
        #expect(w.coordinate("a") == C(3, 3))
        try w.drag("a", .dragging, C(4, 4), by: o)
        // Each ending commits that dragger's own last coordinate.
        #expect(dragSteps(try w.drag("a", .ending, by: e2)).map(\.coordinate) == [C(2, 2), C(2, 2)])
        #expect(w.coordinate("a") == C(2, 2))
        try w.drag("a", .ending, by: o)
        try w.drag("a", .ending, by: e)
        #expect(w.coordinate("a") == C(3, 3))
        #expect(w.session.drags.isEmpty)
    }

    @Test func cancelingByTheLastDraggerRestoresTheLastCommittedCoordinate() throws {
        var (w, _, e, e2) = try world()
        try w.drag("a", .starting, by: e)
        try w.drag("a", .starting, by: e2)
        try w.drag("a", .dragging, C(1, 1), by: e)
        try w.drag("a", .ending, by: e)
        #expect(w.session.drags["a"]?.origin == C(1, 1))
        try w.drag("a", .dragging, C(2, 2), by: e2)
        #expect(dragSteps(try w.drag("a", .canceling, by: e2)).map(\.coordinate) == [C(1, 1), C(1, 1)])
        #expect(w.coordinate("a") == C(1, 1))
    }

    @Test func cancelingWhileOthersDragKeepsTheLiveCoordinate() throws {
        var (w, _, e, e2) = try world()
        try w.drag("a", .starting, by: e)
        try w.drag("a", .starting, by: e2)
        try w.drag("a", .dragging, C(1, 1), by: e)
        try w.drag("a", .dragging, C(2, 2), by: e2)
        #expect(dragSteps(try w.drag("a", .canceling, by: e)).map(\.coordinate) == [C(2, 2), C(2, 2)])
        #expect(w.coordinate("a") == C(2, 2))
        #expect(dragSteps(try w.drag("a", .canceling, by: e2)).map(\.coordinate) == [Self.start, Self.start])
    }

    @Test func leasesStillExpirePerDragger() throws {
        var (w, _, e, e2) = try world()
        try w.drag("a", .starting, by: e)
        w.advance(.seconds(5))
        try w.drag("a", .starting, by: e2)
        let out = dragSteps(w.session.expireDrags(at: .seconds(10)).map(\.event))
        #expect(out.map(\.participant) == [e, e])
        #expect(w.session.drags["a"]?.drags.map(\.participant) == [e2])
    }
}

@Suite struct DragPolicyChangeTests {
    @Test func changingThePolicyCancelsDrags() throws {
        var w = World(policy: .lastWriterWins)
        let o = try w.join("Olive", .owner)
        let e = try w.join("Ed", .editor)
        try w.add(pin("a", at: C(1, 1)), by: o)
        try w.add(pin("b", at: C(2, 2)), by: o)
        try w.drag("a", .starting, by: e)
        try w.drag("a", .dragging, C(5, 5), by: e)
        try w.drag("a", .starting, by: o)
        try w.drag("b", .starting, by: o)
        // Setting the same policy changes no drag.
        #expect(try w.events(.configure(settingsPatch { $0.dragPolicy = .lastWriterWins }), by: o) == [.settings(w.session.settings)])
        #expect(w.session.drags.count == 2)
        let events = try w.events(.configure(settingsPatch { $0.dragPolicy = .exclusive }), by: o)
        let steps = dragSteps(events)
        #expect(steps.count == 6)
        #expect(steps.allSatisfy { $0.reason == .policyChanged })
        #expect(events.last == .settings(SessionSettings(dragPolicy: .exclusive)))
        #expect(w.session.drags.isEmpty)
        #expect(w.coordinate("a") == C(1, 1))
        #expect(w.coordinate("b") == C(2, 2))
    }
}
