import MeridianCore

/// A viewport-interest member following the harness's viewer (slot 3), or a member with a filter
/// (alone, or with that viewport): its annotations, built only from what an ``InterestRouter``
/// lets through, must equal the session's inside its area that its filter matches, and its stream
/// must account for every seq (SPEC §4.7).
struct ViewportWatch {
    static let key = "watch"
    static let viewport = Interest(
        mode: .viewport, margin: 0.25, camera: Camera(center: Coordinate(latitude: 10, longitude: 20), zoom: 3),
        viewport: Viewport(width: 800, height: 600))
    /// A filter over the fields the harness's updates change (draggable, title, zIndex, enabled).
    static let filter = try! AnnotationFilter("draggable = true and title != null or zIndex >= 3 and not enabled = false")
    /// The interests of the harness's watchers: the viewport, the filter alone, and both.
    static let interests = [
        viewport, Interest(mode: .everything, filter: filter),
        { var i = viewport; i.filter = filter; return i }(),
    ]
    var router: InterestRouter<String>
    let interest: Interest
    var view: InterestView
    var annotations: [String: Annotation] = [:]
    /// Each held annotation's drags by participant, applied strictly in order: from the `drags` of
    /// what entered, then the drag events (in progress, or ending or canceling until `none`).
    var drags: [String: [ParticipantID: DragState]] = [:]
    var lastSeq: UInt64

    init(_ session: Session, following participant: Participant?, interest: Interest = ViewportWatch.viewport) {
        self.interest = interest
        router = InterestRouter(session: session)
        view = InterestView(interest, participant: participant)
        lastSeq = session.seq
        for a in router.setView(view, of: Self.key, seq: session.seq, complete: true, in: session).entered { enter(a, session) }
    }

    /// An annotation that entered with its drags in progress now (those of `session`, or `drags`).
    private mutating func enter(_ a: Annotation, _ session: Session, drags list: [ActiveDrag]? = nil) {
        annotations[a.id] = a
        let list = list ?? session.drags[a.id]?.drags ?? []
        drags[a.id] = list.isEmpty ? nil : Dictionary(uniqueKeysWithValues: list.map { ($0.participant, $0.state) })
    }

    /// Routes `events` (which `session` has applied; `departed`: the annotation the command
    /// removed) as the hub does, then follows the viewer's view. The member never receives an
    /// event about an annotation it does not hold, and a skipped marker never covers a seq its
    /// stream accounted for already (an `interest` message accounts for its seq).
    mutating func apply(
        _ events: [Emitted], _ session: Session, departed: Annotation?, following participant: Participant?, after what: String
    ) throws(Violation) {
        for (i, e) in events.enumerated() {
            let route = router.route(e, in: session, departed: departed, following: events[(i + 1)...])
            if let skipped = route.skipped.first(where: { $0.member == Self.key }) {
                try require(skipped.seq > lastSeq, "\(what): skipped marker \(skipped.seq) after the stream accounted for \(lastSeq)")
                lastSeq = skipped.seq
            }
            for entering in route.entering where entering.member == Self.key {
                enter(entering.annotation, session, drags: route.enteringDrags)
                lastSeq = max(lastSeq, e.isTransient ? e.seq : e.seq - 1)
            }
            if route.everyone || route.recipients.contains(Self.key) {
                if !e.isTransient {
                    try require(e.seq == lastSeq + 1, "\(what): viewport stream got seq \(e.seq) after \(lastSeq)")
                    lastSeq = e.seq
                }
                switch e.event {
                case .annotationAdded(let a), .annotationUpdated(let a): annotations[a.id] = a
                case .annotationRemoved(let id):
                    try require(annotations.removeValue(forKey: id) != nil, "\(what): annotation.removed of \(id), which the viewport member does not hold")
                    drags[id] = nil
                case .drag(let id, let pid, let state, let c, _):
                    guard case .point(var p)? = annotations[id]?.shape else {
                        throw Violation("\(what): drag \(state) of \(id), which the viewport member does not hold")
                    }
                    try step(id, pid, state, seq: e.seq, after: what)
                    p.coordinate = c
                    annotations[id]!.shape = .point(p)
                    if state == .ending { annotations[id]!.revision = e.seq }
                default: break
                }
            }
            if route.leaving.contains(Self.key) {
                annotations[route.annotation!] = nil
                drags[route.annotation!] = nil
                lastSeq = max(lastSeq, e.seq)
            }
        }
        let next = InterestView(interest, participant: participant)
        if next != view {
            let change = router.setView(next, of: Self.key, seq: session.seq, in: session)
            for a in change.entered { enter(a, session) }
            for id in change.left { annotations[id] = nil; drags[id] = nil }
            if !change.entered.isEmpty || !change.left.isEmpty {
                router.accountThrough(session.seq, for: Self.key)
                lastSeq = max(lastSeq, session.seq)
            }
            view = next
        }
    }

    /// A drag step follows from what the member holds: one `starting` per drag, a move or an end
    /// only of a drag in progress, `none` only after its end.
    private mutating func step(_ id: String, _ pid: ParticipantID, _ state: DragState, seq: UInt64, after what: String) throws(Violation) {
        let held = drags[id]?[pid] ?? DragState.none
        let follows = switch state {
        case .starting: held == .none
        case .dragging, .canceling, .ending: held == .starting || held == .dragging
        case .none: held == .canceling || held == .ending
        }
        try require(follows, "\(what): drag \(state) of \(id) by \(pid) (seq \(seq)) while the member with \(interest) holds \(held)")
        drags[id, default: [:]][pid] = state == .none ? nil : state
        if drags[id]?.isEmpty == true { drags[id] = nil }
    }

    func check(against session: Session, after what: String) throws(Violation) {
        guard let area = view.annotationArea else { return }
        let expected = session.annotations.filter { $0.value.bounds.intersects(area) && (view.filter?.matches($0.value) ?? true) }
        try require(annotations == expected, "\(what): the member with \(interest) holds \(annotations.keys.sorted()), its area \(expected.keys.sorted())")
        let held = drags.compactMapValues { d in
            let active = d.filter { $0.value == .starting || $0.value == .dragging }
            return active.isEmpty ? nil : active
        }
        let live = session.drags.filter { expected[$0.key] != nil }
            .mapValues { Dictionary(uniqueKeysWithValues: $0.drags.map { ($0.participant, $0.state) }) }
        try require(held == live, "\(what): the member with \(interest) holds the drags \(held), its area \(live)")
    }
}
