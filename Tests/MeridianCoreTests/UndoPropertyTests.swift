import Testing
@testable import MeridianCore

/// Undo and redo over random sessions of several editors changing the same few annotations:
/// - an undo or redo changes only the annotation its mark names, and only when the sender's
///   own change is the last one made to it (never another participant's change);
/// - an undo made right after one's own change restores the whole state as it was before it;
/// - a redo made right after an undo restores the state as it was before the undo.
@Suite struct UndoPropertyTests {
    static let seeds: [UInt64] = Array(1...120)
    static let steps = 300
    static let ids = ["a", "b", "c", "d"]

    struct Coverage {
        var accepted: [String: Int] = [:]
        var conflicts = 0
    }

    @Test(arguments: DragPolicy.allCases)
    func undoNeverRevertsAnotherParticipantsChange(policy: DragPolicy) throws {
        var coverage = Coverage()
        for seed in Self.seeds {
            try run(seed: seed &* 104_729 &+ UInt64(DragPolicy.allCases.firstIndex(of: policy)!), policy: policy, coverage: &coverage)
        }
        for name in ["undo", "redo", "undo right after", "redo right after", "undo of a run"] {
            #expect(coverage.accepted[name, default: 0] >= 100, "\(policy): \(name) accepted \(coverage.accepted[name, default: 0]) times")
        }
        #expect(coverage.conflicts >= 50, "\(policy): \(coverage.conflicts) undo conflicts")
    }

    func run(seed: UInt64, policy: DragPolicy, coverage: inout Coverage) throws {
        var rng = SplitMix64(seed: seed)
        var session = Session(id: "undo", epoch: "e", settings: SessionSettings(dragPolicy: policy))
        let now: Duration = .zero
        var editors: [ParticipantID] = []
        for name in ["Ann", "Bo", "Cy"] {
            guard case .success(let (pid, _)) = session.join(JoinRequest(name: name, role: .editor), at: now) else { return }
            editors.append(pid)
        }
        /// Who made the last change to each annotation (kept by the test from accepted commands).
        var lastWriter: [String: ParticipantID] = [:]

        /// Notes who made the changes `result` carries (every event that changes an annotation).
        func note(_ result: ApplyResult, by p: ParticipantID) {
            guard case .success(let accepted) = result else { return }
            for e in accepted.events {
                switch e.event {
                case .annotationAdded(let a), .annotationUpdated(let a): lastWriter[a.id] = p
                case .annotationRemoved(let id), .drag(let id, _, .ending, _, _): lastWriter[id] = p
                default: continue
                }
            }
        }

        for step in 1...Self.steps {
            let context = "seed \(seed) policy \(policy.rawValue) step \(step)"
            let p = rng.pick(editors)
            let id = rng.pick(Self.ids)
            let command: Command = switch rng.int(12) {
            case 0, 1: .addAnnotation(Annotation(id: id, shape: .point(Point(coordinate: C(rng.double(-80...80), rng.double(-170...170)), draggable: true))))
            case 2, 3: .updateAnnotation(id: id, patch { $0.title = "t\(step)"; if rng.chance(0.3) { $0.kind = "k\(rng.int(3))" } })
            case 4: .removeAnnotation(id: id)
            case 5: .drag(annotation: id, state: .starting, coordinate: nil)
            case 6: .drag(annotation: id, state: .dragging, coordinate: C(rng.double(-80...80), rng.double(-170...170)))
            case 7: .drag(annotation: id, state: rng.chance(0.7) ? .ending : .canceling, coordinate: nil)
            case 8, 9, 10: .undo
            default: .redo
            }
            // Now and then a run of the sender's own changes, undone and then redone in turn.
            if rng.chance(0.08) {
                let start = contentOf(committed(session))
                var made = 0
                for _ in 0..<(2 + rng.int(4)) {
                    let target = rng.pick(Self.ids)
                    let change: Command = switch (session.annotations[target] == nil, rng.int(3)) {
                    case (true, _): .addAnnotation(Annotation(id: target, shape: .point(Point(coordinate: C(rng.double(-80...80), 0), draggable: true))))
                    case (false, 0): .removeAnnotation(id: target)
                    default: .updateAnnotation(id: target, patch { $0.title = "run\(step)-\(made)" })
                    }
                    let result = session.apply(change, from: p, at: now)
                    note(result, by: p)
                    if case .success = result { made += 1 }
                }
                let end = contentOf(committed(session))
                for i in 0..<made {
                    let result = session.apply(.undo, from: p, at: now)
                    note(result, by: p)
                    if case .failure(let error) = result {
                        // Another participant's drag of one of them goes on: the run ends here. Nothing else stops it.
                        try #require(error.code == .beingDragged, "\(context): undo \(i + 1) of a run of \(made) own changes refused: \(error)")
                        break
                    }
                    coverage.accepted["undo of a run", default: 0] += 1
                    if i == made - 1 {
                        try #require(contentOf(committed(session)) == start, "\(context): undoing a run of \(made) own changes did not restore the state")
                        for _ in 0..<made {
                            let result = session.apply(.redo, from: p, at: now)
                            note(result, by: p)
                            guard case .success = result else {
                                Issue.record("\(context): redo of a run refused")
                                return
                            }
                        }
                        try #require(contentOf(committed(session)) == end, "\(context): redoing a run of \(made) own changes did not restore it")
                    }
                }
                continue
            }
            let before = session.annotations
            let committedBefore = committed(session)
            let accepted: Accepted
            switch session.apply(command, from: p, at: now) {
            case .success(let a):
                accepted = a
            case .failure(let error):
                if error.code == .revisionConflict { coverage.conflicts += 1 }
                if session.annotations != before {
                    Issue.record("\(context): a refused \(command.name) changed the annotations")
                    return
                }
                continue
            }
            if command == .undo || command == .redo {
                coverage.accepted[command.name, default: 0] += 1
                guard case .undone(let mark) = accepted.events.first?.event else {
                    Issue.record("\(context): \(command.name) began with \(String(describing: accepted.events.first))")
                    return
                }
                #expect(mark.participant == p && mark.redo == (command == .redo), "\(context)")
                // Only the sender's own last change, and only that annotation.
                try #require(lastWriter[mark.annotation] == p, "\(context): \(p) reverted \(mark.annotation), last changed by \(lastWriter[mark.annotation] ?? "nobody")")
                #expect(before.filter { $0.key != mark.annotation } == session.annotations.filter { $0.key != mark.annotation }, "\(context): another annotation changed")
                note(.success(accepted), by: p)
                // Reverting again at once brings back the state before.
                if rng.chance(0.5) {
                    let again: Command = command == .undo ? .redo : .undo
                    let reverted = session.annotations
                    let result = session.apply(again, from: p, at: now)
                    note(result, by: p)
                    guard case .success = result else {
                        Issue.record("\(context): \(again.name) right after \(command.name) refused")
                        return
                    }
                    coverage.accepted["\(again.name) right after", default: 0] += 1
                    try #require(contentOf(committed(session)) == contentOf(committedBefore), "\(context): \(command.name) then \(again.name) did not restore the state (\(contentOf(reverted)))")
                }
                continue
            }
            note(.success(accepted), by: p)
            guard accepted.events.contains(where: { e in
                switch e.event {
                case .annotationAdded, .annotationUpdated, .annotationRemoved, .drag(_, _, .ending, _, _): true
                default: false
                }
            }) else { continue }
            // Some changes are undone at once: the state before comes back exactly.
            if rng.chance(0.2) {
                let result = session.apply(.undo, from: p, at: now)
                note(result, by: p)
                switch result {
                case .success:
                    coverage.accepted["undo right after", default: 0] += 1
                    try #require(contentOf(committed(session)) == contentOf(committedBefore), "\(context): undo of \(command.name) did not restore the state")
                case .failure(let error):
                    // Someone else's drag of it goes on: the undo waits for it, and nothing else stops it.
                    try #require(error.code == .beingDragged, "\(context): undo right after \(command.name) refused: \(error)")
                }
            }
        }
    }

    /// Every annotation in committed form (a drag in progress at its origin).
    func committed(_ session: Session) -> [String: Annotation] {
        session.annotations.compactMapValues { session.committedAnnotation($0.id) }
    }
}
