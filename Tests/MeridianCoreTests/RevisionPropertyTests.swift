import Testing
@testable import MeridianCore

/// The annotation an event changes and the revision it leaves it at (nil: removed), read from
/// the event alone as a client reads it; nil for events that change no annotation's revision.
private func revisionChange(_ e: Emitted) -> (id: String, revision: UInt64?)? {
    switch e.event {
    case .annotationAdded(let a), .annotationUpdated(let a): (a.id, a.revision)
    case .annotationRemoved(let id): (id, nil)
    case .drag(let id, _, .ending, _, _): (id, e.seq)
    default: nil
    }
}

/// What one participant knows of the annotations' revisions: only what the events delivered to
/// it so far say. Delivery lags at random (a phone in a tunnel), so its knowledge may be stale.
private struct Writer {
    let id: ParticipantID
    var undelivered: [Emitted] = []
    /// The revision of each annotation as the delivered events show it (added, updated, ending).
    var seen: [String: UInt64] = [:]

    mutating func deliver() {
        for e in undelivered {
            if let (id, revision) = revisionChange(e) { seen[id] = revision }
        }
        undelivered = []
    }
}

/// "A conditional write never overwrites a change the writer did not see", over random
/// sessions of several participants whose event streams lag behind at random.
@Suite struct RevisionPropertyTests {
    static let seeds: [UInt64] = Array(1...150)
    static let steps = 250
    static let ids = ["a", "b", "c"]

    struct Coverage {
        var acceptedConditional: [String: Int] = [:]
        var conflicts: [String: Int] = [:]
    }

    @Test(arguments: DragPolicy.allCases)
    func conditionalWritesNeverOverwriteUnseenChanges(policy: DragPolicy) throws {
        var coverage = Coverage()
        for seed in Self.seeds {
            try run(seed: seed &* 7_919 &+ UInt64(DragPolicy.allCases.firstIndex(of: policy)!), policy: policy, coverage: &coverage)
        }
        for name in ["annotation.update", "annotation.remove", "drag"] {
            #expect(coverage.acceptedConditional[name, default: 0] >= 30, "\(policy): \(name) accepted conditionally \(coverage.acceptedConditional[name, default: 0]) times")
            #expect(coverage.conflicts[name, default: 0] >= 30, "\(policy): \(name) refused for a stale revision \(coverage.conflicts[name, default: 0]) times")
        }
    }

    func run(seed: UInt64, policy: DragPolicy, coverage: inout Coverage) throws {
        var rng = SplitMix64(seed: seed)
        var session = Session(id: "rev", epoch: "e", settings: SessionSettings(dragPolicy: policy))
        var now: Duration = .zero
        var writers: [Writer] = []
        /// The seq of the last event that changed each annotation, kept by the test from the
        /// events alone (not from the session's revisions).
        var lastChange: [String: UInt64] = [:]

        func broadcast(_ events: [Emitted]) {
            for e in events {
                // The test's own record: the seq of the last event that changed the annotation.
                if let (id, revision) = revisionChange(e) { lastChange[id] = revision == nil ? nil : e.seq }
                for i in writers.indices { writers[i].undelivered.append(e) }
            }
        }

        for (name, role) in [("Owner", Role.owner), ("Ed", .editor), ("Eve", .editor), ("Vic", .viewer)] {
            guard case .success(let (pid, events)) = session.join(JoinRequest(name: name, role: role), at: now) else {
                Issue.record("seed \(seed): join refused")
                return
            }
            writers.append(Writer(id: pid))
            broadcast(events)
        }
        for i in writers.indices { writers[i].deliver() }

        for step in 1...Self.steps {
            let context = "seed \(seed) policy \(policy.rawValue) step \(step)"
            // Streams catch up at random, some often, some rarely.
            for i in writers.indices where rng.chance(i == 0 ? 0.6 : 0.25) { writers[i].deliver() }
            let w = rng.int(writers.count)
            let writer = writers[w]
            let id = rng.pick(Self.ids)
            // What the writer believes (sometimes a made-up number), or no condition at all.
            let condition: UInt64? = switch rng.int(10) {
            case 0: nil
            case 1: UInt64(1 + rng.int(Int(session.seq) + 2))
            default: writer.seen[id]
            }
            let command: Command = switch rng.int(10) {
            case 0, 1: .addAnnotation(Annotation(id: id, shape: .point(Point(coordinate: C(rng.double(-80...80), rng.double(-170...170)), draggable: true))))
            case 2, 3, 4: .updateAnnotation(id: id, patch { $0.title = "t\(step)" }, ifRevision: condition)
            case 5: .removeAnnotation(id: id, ifRevision: condition)
            case 6: .drag(annotation: id, state: .starting, coordinate: nil, ifRevision: condition)
            case 7: .drag(annotation: id, state: .dragging, coordinate: C(rng.double(-80...80), rng.double(-170...170)))
            case 8: .drag(annotation: id, state: rng.chance(0.7) ? .ending : .canceling, coordinate: nil)
            default: .updateAnnotation(id: id, patch { $0.coordinate = C(rng.double(-80...80), rng.double(-170...170)) }, ifRevision: condition)
            }
            let conditional: UInt64? = switch command {
            case .updateAnnotation(_, _, let r), .removeAnnotation(_, let r), .drag(_, .starting, _, let r): r
            default: nil
            }
            let before = session.contents
            let current = session.annotations[id]
            let lastBefore = lastChange[id]
            switch session.apply(command, from: writer.id, at: now) {
            case .success(let accepted):
                if let conditional {
                    coverage.acceptedConditional[command.name, default: 0] += 1
                    // Accepted only against the revision it has now, which is the last change the test saw.
                    try #require(conditional == current?.revision, "\(context): \(command) accepted at revision \(current?.revision ?? 0)")
                    try #require(conditional == lastBefore, "\(context): \(command) accepted, last change \(lastBefore ?? 0)")
                }
                broadcast(accepted.events)
            case .failure(let error):
                #expect(session.contents == before, "\(context): refused \(command) (\(error)) changed the session")
                if error.code == .revisionConflict {
                    coverage.conflicts[command.name, default: 0] += 1
                    try #require(conditional != nil && conditional != current?.revision, "\(context): \(error) for \(command)")
                    #expect(error.annotation == current, "\(context): the conflict carries \(String(describing: error.annotation))")
                }
            }
            // Every write made against a revision other than the last change must have been refused:
            // in particular one from a writer whose stream has not delivered that change yet.
            if let conditional, let current, conditional != lastBefore, session.contents != before {
                Issue.record("\(context): \(command) at stale revision \(conditional) (current \(current.revision)) changed the session")
                return
            }
            // The session's revisions are the test's own record of the last changes.
            #expect(session.annotations.mapValues(\.revision) == lastChange.filter { session.annotations[$0.key] != nil }, "\(context)")
            if rng.chance(0.05) {
                now += .seconds(15)
                broadcast(session.expireDrags(at: now))
            }
        }
    }
}
