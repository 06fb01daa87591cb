import MeridianCore

/// What a client that applies every broadcast event in order knows of the
/// session. DOMAIN.md: every client converges to the server's state, so after
/// each step the mirror must agree with the session.
struct SessionMirror {
    var annotations: [String: Annotation] = [:]
    var selections: [ParticipantID: String] = [:]
    var listed: Set<ParticipantID> = []
    var callout: Callout?
    var cameraLeaseHolder: ParticipantID?
    var sharedCamera: Camera?
    var settings: SessionSettings
    /// Drag state per annotation and participant, for drags not back at `none`.
    var drags: [String: [ParticipantID: DragState]] = [:]

    init(_ session: Session) { settings = session.settings }

    mutating func apply(_ events: [Emitted]) {
        for e in events { apply(e.event, seq: e.seq) }
    }

    mutating func apply(_ event: Event, seq: UInt64) {
        switch event {
        case .participantJoined(let p): listed.insert(p.id)
        case .participantLeft(let pid, _):
            listed.remove(pid)
            selections[pid] = nil
        case .presence(let joined, let left):
            for p in joined { listed.insert(p.id) }
            for l in left {
                listed.remove(l.participant)
                selections[l.participant] = nil
            }
        case .camera(.shared, _, let phase, _): if let c = phase.camera { sharedCamera = c }
        case .camera: break
        case .cameraLease(let holder, _): cameraLeaseHolder = holder
        case .annotationAdded(let a), .annotationUpdated(let a): annotations[a.id] = a
        case .annotationRemoved(let id): annotations[id] = nil
        case .selection(let pid, let id, _): selections[pid] = id
        case .calloutShown(let c, _): callout = c
        case .calloutHidden: callout = nil
        case .drag(let id, let pid, let state, let coordinate, _):
            if case .point(var p)? = annotations[id]?.shape {
                p.coordinate = coordinate
                annotations[id]?.shape = .point(p)
            }
            // An ending commits the coordinate: the event's seq is the annotation's revision (its `revision` on the wire).
            if state == .ending { annotations[id]?.revision = seq }
            drags[id, default: [:]][pid] = state == .none ? nil : state
            if drags[id]?.isEmpty == true { drags[id] = nil }
        case .settings(let s): settings = s
        case .follow, .mapLoad, .location, .calloutTapped, .undone: break
        }
    }

    /// Differences from the session, as a violation.
    func check(against s: Session, after what: String) throws(Violation) {
        for id in Set(annotations.keys).union(s.annotations.keys) where annotations[id] != s.annotations[id] {
            throw Violation("after \(what), clients see \"\(id)\" as \(annotations[id].map { "\($0)" } ?? "absent"), the session has \(s.annotations[id].map { "\($0)" } ?? "none")")
        }
        var serverDrags: [String: [ParticipantID: DragState]] = [:]
        for (id, group) in s.drags {
            for d in group.drags { serverDrags[id, default: [:]][d.participant] = d.state }
        }
        try require(drags == serverDrags, "after \(what), clients see drags \(drags), the session has \(serverDrags)")
        let visible = Set(s.participants.values.filter { !$0.hidden }.map(\.id))
        try require(listed == visible, "after \(what), clients list \(listed.sorted()), the session has \(visible.sorted())")
        for pid in visible {
            try require(selections[pid] == s.participants[pid]?.selection, "after \(what), clients see \(pid) selecting \(selections[pid] ?? "nothing")")
        }
        try require(callout == s.callout, "after \(what), clients see callout \(callout.map { "\($0)" } ?? "none")")
        try require(cameraLeaseHolder == s.cameraLeaseHolder, "after \(what), clients see the camera lease held by \(cameraLeaseHolder ?? "nobody")")
        try require(sharedCamera == s.sharedCamera, "after \(what), clients see shared camera \(sharedCamera.map { "\($0)" } ?? "none")")
        try require(settings == s.settings, "after \(what), clients see settings \(settings)")
    }
}
