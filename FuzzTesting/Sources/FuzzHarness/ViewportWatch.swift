import MeridianCore

/// A viewport-interest member following the harness's viewer (slot 3): its annotations, built
/// only from what an ``InterestRouter`` lets through, must equal the session's inside its area,
/// and its stream must account for every seq (SPEC §4.7).
struct ViewportWatch {
    static let key = "watch"
    var router: InterestRouter<String>
    let interest = Interest(
        mode: .viewport, margin: 0.25, camera: Camera(center: Coordinate(latitude: 10, longitude: 20), zoom: 3),
        viewport: Viewport(width: 800, height: 600))
    var view: InterestView
    var annotations: [String: Annotation] = [:]
    var lastSeq: UInt64

    init(_ session: Session, following participant: Participant?) {
        router = InterestRouter(session: session)
        view = InterestView(interest, participant: participant)
        lastSeq = session.seq
        for a in router.setView(view, of: Self.key, seq: session.seq, complete: true, in: session).entered { annotations[a.id] = a }
    }

    /// Routes `events` (which `session` has applied) as the hub does, then follows the viewer's view.
    mutating func apply(_ events: [Emitted], _ session: Session, following participant: Participant?, after what: String) throws(Violation) {
        for e in events {
            let route = router.route(e, in: session)
            if let skipped = route.skipped.first(where: { $0.member == Self.key }) {
                try require(skipped.seq >= lastSeq, "\(what): skipped marker \(skipped.seq) behind \(lastSeq)")
                lastSeq = skipped.seq
            }
            for entering in route.entering where entering.member == Self.key { annotations[entering.annotation.id] = entering.annotation }
            if route.everyone || route.recipients.contains(Self.key) {
                if !e.isTransient {
                    try require(e.seq == lastSeq + 1, "\(what): viewport stream got seq \(e.seq) after \(lastSeq)")
                    lastSeq = e.seq
                }
                switch e.event {
                case .annotationAdded(let a), .annotationUpdated(let a): annotations[a.id] = a
                case .annotationRemoved(let id): annotations[id] = nil
                case .drag(let id, _, _, let c, _):
                    if case .point(var p)? = annotations[id]?.shape { p.coordinate = c; annotations[id]!.shape = .point(p) }
                default: break
                }
            }
            if route.leaving.contains(Self.key) { annotations[route.annotation!] = nil }
        }
        let next = InterestView(interest, participant: participant)
        if next != view {
            let change = router.setView(next, of: Self.key, seq: session.seq, in: session)
            for a in change.entered { annotations[a.id] = a }
            for id in change.left { annotations[id] = nil }
            if !change.entered.isEmpty || !change.left.isEmpty {
                router.accountThrough(session.seq, for: Self.key)
                lastSeq = max(lastSeq, session.seq)
            }
            view = next
        }
    }

    func check(against session: Session, after what: String) throws(Violation) {
        guard let area = view.annotationArea else { return }
        let expected = session.annotations.filter { $0.value.bounds.intersects(area) }
        try require(annotations == expected, "\(what): the viewport member holds \(annotations.keys.sorted()), its area \(expected.keys.sorted())")
    }
}
