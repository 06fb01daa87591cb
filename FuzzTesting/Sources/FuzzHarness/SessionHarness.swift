import MeridianCore

/// Plays fuzzer bytes as a script of commands from five participants of one
/// session, checking every invariant after each step.
///
/// Byte 0 picks the drag policy and lease timeout. Then each step reads an
/// operation byte (modulo 20; its quotient makes an update, a remove or a drag's
/// start conditional on a revision), a participant slot (owner, editor, editor,
/// viewer, hidden viewer) and the operation's parameters from ``Pools``.
public enum SessionHarness {
    static let slots: [JoinRequest] = [
        JoinRequest(name: "Olga", role: .owner), JoinRequest(name: "Ed", role: .editor),
        JoinRequest(name: "Eve", role: .editor), JoinRequest(name: "Vic", role: .viewer),
        JoinRequest(name: "Dash", role: .viewer, hidden: true),
    ]
    static let maxSteps = 256

    public static func run(_ bytes: [UInt8]) throws(Violation) {
        var r = ByteReader(bytes)
        let first = r.byte()
        var settings = SessionSettings()
        settings.dragPolicy = DragPolicy.allCases[Int(first) % 3]
        settings.leaseTimeout = (first / 3) % 2 == 0 ? .seconds(10) : .seconds(1)
        var run = Run(session: Session(id: "fuzz", epoch: "e1", settings: settings))
        for slot in slots.indices { try run.join(slot) }
        try run.apply(.addAnnotation(Annotation(
            id: "a", shape: .point(Point(coordinate: Pools.coordinates[0], draggable: true, canShowCallout: true)), title: "Pin")), slot: 0)
        var steps = 0
        while !r.isAtEnd, steps < maxSteps {
            steps += 1
            try run.step(&r)
        }
    }

    struct Run {
        var session: Session
        var mirror: SessionMirror
        var now: Duration = .zero
        /// The participant id each slot joined as last (kept after it leaves, so its commands go on, and are refused).
        var pids: [ParticipantID] = Array(repeating: "p0", count: SessionHarness.slots.count)
        /// Members with viewport interest whose view follows the viewer's own camera, or a filter.
        var watches: [ViewportWatch]
        /// The annotation the command being applied removes.
        var departed: Annotation?

        init(session: Session) {
            self.session = session
            mirror = SessionMirror(session)
            watches = ViewportWatch.interests.map { ViewportWatch(session, following: nil, interest: $0) }
        }

        /// Every invariant of the state, and clients that applied `events` agree with it.
        mutating func broadcast(_ events: [Emitted], after what: String) throws(Violation) {
            // Above the presence batch size, joins and leaves are announced by the hub's next
            // tick (one `presence` event): here a tick follows every step.
            let seq = session.seq
            let announced = session.flushPresence()
            try SessionInvariants.numbering(announced, from: seq, to: session.seq, "presence after \(what)")
            try SessionInvariants.check(session, now: now)
            mirror.apply(events + announced)
            try mirror.check(against: session, after: what)
            for i in watches.indices {
                try watches[i].apply(events + announced, session, departed: departed, following: session.participants[pids[3]], after: what)
                try watches[i].check(against: session, after: what)
            }
        }

        mutating func join(_ slot: Int) throws(Violation) {
            let before = session.contents
            switch session.join(SessionHarness.slots[slot], at: now) {
            case .success(let (pid, events)):
                pids[slot] = pid
                try SessionInvariants.numbering(events, from: before.seq, to: session.seq, "join")
                try require(session.participants[pid] != nil, "joined \(pid) is not in the session")
                try broadcast(events, after: "join of \(pid)")
            case .failure(let e):
                try require(session.contents == before, "refused join (\(e)) changed the session")
            }
        }

        mutating func step(_ r: inout ByteReader) throws(Violation) {
            // The operation is the byte modulo 20; the quotient makes an update, a remove or a
            // drag's start conditional, and a deselect an undo or a redo (0: neither, so the seeds
            // stay as they were written).
            let code = Int(r.byte())
            let (op, variant) = (code % 20, code / 20)
            let slot = r.pick(SessionHarness.slots.count)
            let pid = pids[slot]
            switch op {
            case 0: try apply(.addAnnotation(Pools.annotation(r.pick(from: Pools.ids), &r)), slot: slot)
            case 1:
                let id = r.pick(from: Pools.ids)
                try apply(.updateAnnotation(id: id, Pools.patch(&r), ifRevision: ifRevision(of: id, variant)), slot: slot)
            case 2:
                let id = r.pick(from: Pools.ids)
                try apply(.removeAnnotation(id: id, ifRevision: ifRevision(of: id, variant)), slot: slot)
            case 3: try apply(.select(annotation: r.pick(from: Pools.ids)), slot: slot)
            case 4:
                // The quotient turns a deselect into an undo or a redo (0: a deselect, as seeds were written).
                switch variant % 3 {
                case 1: try apply(.undo, slot: slot)
                case 2: try apply(.redo, slot: slot)
                default: try apply(.deselect, slot: slot)
                }
            case 5: try apply(.showCallout(callout(&r)), slot: slot)
            case 6: try apply(.hideCallout, slot: slot)
            case 7: try apply(.tapCallout(r.pick(from: Callout.Part.allCases)), slot: slot)
            case 8, 9:
                let coordinate: Coordinate? = r.bool() ? r.pick(from: Pools.coordinates) : nil
                let id = r.pick(from: Pools.ids), state = r.pick(from: DragState.allCases)
                let condition = state == .starting ? ifRevision(of: id, variant) : nil
                try apply(.drag(annotation: id, state: state, coordinate: coordinate, ifRevision: condition), slot: slot)
            case 10: try apply(camera(&r), slot: slot)
            case 11: try apply(.acquireCameraLease(force: r.bool()), slot: slot)
            case 12: try apply(.releaseCameraLease, slot: slot)
            case 13:
                let targets: [FollowTarget?] = [nil, .shared, .participant(pids[r.pick(pids.count)]), .participant(pid)]
                try apply(.follow(r.pick(from: targets)), slot: slot)
            case 14: try apply(.location(Pools.location(&r)), slot: slot)
            case 15: try apply(.mapLoad(r.pick(from: Pools.mapLoads)), slot: slot)
            case 16: try apply(.configure(Pools.settings(&r)), slot: slot)
            case 17: try leave(pid)
            case 18: try join(slot)
            default: try advance(r.pick(from: Pools.delays))
            }
        }

        /// The `ifRevision` of a conditional command on `id` (`variant` 0: none): the annotation's
        /// revision now, one past it, or one before it (never below 1).
        func ifRevision(of id: String, _ variant: Int) -> UInt64? {
            guard variant > 0 else { return nil }
            let current = session.annotations[id]?.revision ?? 1
            switch variant % 3 {
            case 1: return current
            case 2: return current + 1
            default: return max(1, current - 1)
            }
        }

        func callout(_ r: inout ByteReader) -> Callout {
            let anchor: Callout.Anchor = switch r.pick(3) {
            case 0: .coordinate(r.pick(from: Pools.coordinates))
            case 1: .annotation(r.pick(from: Pools.ids))
            default: .participant(r.pick(from: pids + ["p99"]))
            }
            let accessory: Callout.Accessory = r.pick(from: [.hidden, .button(.infoLight), .image("pin"), .image("")])
            return Callout(title: "Here", accessory: accessory, anchor: anchor)
        }

        func camera(_ r: inout ByteReader) -> Command {
            let target: CameraTarget = r.bool() ? .own : .shared
            let camera = r.pick(from: Pools.cameras)
            let phase: CameraPhase = switch r.pick(3) {
            case 0: .begin(animated: r.bool())
            case 1: .changing(camera)
            default: .end(camera, animated: r.bool())
            }
            let viewport: Viewport? = r.pick(from: [nil, Viewport(width: 390, height: 844), Viewport(width: 0, height: 10)])
            return .camera(target, phase, viewport: viewport)
        }

        mutating func apply(_ command: Command, slot: Int) throws(Violation) {
            let pid = pids[slot]
            let participant = session.participants[pid]
            let before = session.contents
            // As the hub does: a removed annotation stays at hand until its events are routed.
            departed = if case .removeAnnotation(let id, _) = command { session.annotations[id] } else { nil }
            defer { departed = nil }
            let condition = command.condition
            let revision = condition.flatMap { session.annotations[$0.id]?.revision }
            let result = session.apply(command, from: pid, at: now)
            let after = session.contents
            let what = "\(command.name) from \(pid)"
            switch result {
            case .failure(let e):
                try require(after == before, "refused \(what) (\(e)) changed the session")
                try require(!e.message.isEmpty, "refused \(what) with an empty message")
                if e.code == .revisionConflict, let condition {
                    try require(revision != nil && revision != condition.revision,
                                "\(what) refused as a revision conflict with ifRevision \(condition.revision) at revision \(revision.map(String.init) ?? "none")")
                }
            case .success(let accepted):
                // A conditional write never changes an annotation its writer saw at another revision.
                if let condition {
                    try require(revision == condition.revision,
                                "\(what) applied with ifRevision \(condition.revision) at revision \(revision.map(String.init) ?? "none")")
                }
                if command == .undo || command == .redo {
                    // An undo changes one annotation only: the one its mark names, as the sender's step left it.
                    guard case .undone(let mark)? = accepted.events.first?.event, mark.participant == pid else {
                        throw Violation("\(what) accepted without its mark first: \(accepted.events.first.map { "\($0.event)" } ?? "no event")")
                    }
                    try require(before.annotations.filter { $0.key != mark.annotation } == after.annotations.filter { $0.key != mark.annotation },
                                "\(what) of \"\(mark.annotation)\" changed another annotation")
                }
                guard let participant else { throw Violation("\(what) accepted from someone not in the session") }
                try require(!participant.hidden, "\(what) accepted from a hidden participant")
                try SessionInvariants.numbering(accepted.events, from: before.seq, to: session.seq, what)
                try require(!accepted.events.isEmpty || after == before, "\(what) changed the session without an event")
                if !participant.role.canEdit {
                    var shared = after.shared
                    // Clearing one's location dismisses a callout anchored to it: that is the viewer's own presence.
                    if case .location(nil) = command { shared.callout = before.shared.callout }
                    try require(shared == before.shared, "\(what), a viewer, changed shared state")
                }
                try broadcast(accepted.events, after: what)
            }
            try SessionInvariants.check(session, now: now)
        }

        mutating func leave(_ pid: ParticipantID) throws(Violation) {
            let before = session.contents
            let events = session.leave(pid, reason: "left", at: now)
            try SessionInvariants.numbering(events, from: before.seq, to: session.seq, "leave of \(pid)")
            try require(session.participants[pid] == nil, "\(pid) still present after leaving")
            try broadcast(events, after: "leave of \(pid)")
        }

        mutating func advance(_ delay: Duration) throws(Violation) {
            now += delay
            let before = session.contents
            let events = session.expireDrags(at: now)
            try SessionInvariants.numbering(events, from: before.seq, to: session.seq, "expireDrags")
            try require(!events.isEmpty || session.contents == before, "expireDrags changed the session without an event")
            for (id, group) in session.drags {
                for d in group.drags {
                    try require(now - d.lastActivity < session.settings.leaseTimeout, "drag of \"\(id)\" by \(d.participant) outlived its lease")
                }
            }
            try broadcast(events, after: "expireDrags")
            try recordRoundTrip()
        }

        /// What storage keeps comes back as it was (a callout anchored to a participant is not kept).
        func recordRoundTrip() throws(Violation) {
            var record = session.record
            if case .participant = record.callout?.anchor { record.callout = nil }
            let restored = Session(restoring: session.record, epoch: "e2")
            try require(restored.record == record, "session restored from its record has another record")
            try require(restored.drags.isEmpty && restored.participants.isEmpty, "restored session has drags or participants")
        }
    }
}

extension Command {
    /// The annotation a conditional command names and the revision it requires, nil for an
    /// unconditional one.
    var condition: (id: String, revision: UInt64)? {
        switch self {
        case .updateAnnotation(let id, _, let revision?): (id, revision)
        case .removeAnnotation(let id, let revision?): (id, revision)
        case .drag(let id, .starting, _, let revision?): (id, revision)
        default: nil
        }
    }
}
