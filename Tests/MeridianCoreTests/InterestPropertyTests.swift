import Testing
@testable import MeridianCore

/// A viewport-interest client's annotations, built only from what the router lets through:
/// the entered annotations of its view changes, the events it receives, and what left.
/// It applies messages strictly in order: it holds the drags of its annotations too (from the
/// `drags` of what entered, then the drag events), and a drag step that does not follow from what
/// it holds — a second `starting`, a move or end of a drag it does not hold — is a gap.
struct ViewportMirror {
    var annotations: [String: Annotation] = [:]
    /// Each held annotation's drags by participant: in progress, or ending or canceling until `none`.
    var drags: [String: [ParticipantID: DragState]] = [:]
    var lastSeq: UInt64 = 0
    var gaps: [String] = []

    /// What entered and left, with the drags of what entered (an `interest` message's `drags`:
    /// the session's now for a view change, the router's for an annotation a drag brings in).
    mutating func apply(_ change: InterestRouter<String>.AreaChange, drags entering: (String) -> [ActiveDrag]) {
        for a in change.entered {
            annotations[a.id] = a
            let list = entering(a.id)
            drags[a.id] = list.isEmpty ? nil : Dictionary(uniqueKeysWithValues: list.map { ($0.participant, $0.state) })
        }
        for id in change.left { annotations[id] = nil; drags[id] = nil }
    }

    mutating func apply(_ change: InterestRouter<String>.AreaChange, in session: Session) {
        apply(change) { session.drags[$0]?.drags ?? [] }
    }

    /// The drags in progress of the annotations it holds.
    var dragsInProgress: [String: [ParticipantID: DragState]] {
        drags.compactMapValues { d in
            let active = d.filter { $0.value == .starting || $0.value == .dragging }
            return active.isEmpty ? nil : active
        }
    }

    /// A discrete event, or a transient one (whose seq is the one it follows, which the stream
    /// may not have accounted for yet: never a gap).
    mutating func receive(_ e: Emitted) {
        if !e.isTransient {
            if e.seq != lastSeq + 1 { gaps.append("discrete seq \(e.seq) after \(lastSeq)") }
            lastSeq = e.seq
        }
        switch e.event {
        case .annotationAdded(let a), .annotationUpdated(let a): annotations[a.id] = a
        case .annotationRemoved(let id):
            if annotations.removeValue(forKey: id) == nil { gaps.append("annotation.removed of \(id), which it does not hold") }
            drags[id] = nil
        case .drag(let id, let pid, let state, let coordinate, _):
            guard annotations[id] != nil else { return gaps.append("drag \(state) of \(id), which it does not hold") }
            let held = drags[id]?[pid] ?? DragState.none
            let follows = switch state {
            case .starting: held == .none
            case .dragging, .canceling, .ending: held == .starting || held == .dragging
            case .none: held == .canceling || held == .ending
            }
            if !follows { gaps.append("drag \(state) of \(id) by \(pid) (seq \(e.seq)) while it holds \(held)") }
            drags[id, default: [:]][pid] = state == .none ? nil : state
            if drags[id]?.isEmpty == true { drags[id] = nil }
            annotations[id]!.movePoint(to: coordinate)
            if state == .ending { annotations[id]!.revision = e.seq }
        default: break
        }
    }

    /// An `interest` message at `seq`: the stream accounts for every seq up to it.
    mutating func account(through seq: UInt64) {
        lastSeq = max(lastSeq, seq)
    }

    /// A `skipped` marker: it only ever covers seqs nothing accounted for yet.
    mutating func skip(through seq: UInt64) {
        if seq <= lastSeq { gaps.append("skipped \(seq) after the stream accounted for \(lastSeq)") }
        lastSeq = max(lastSeq, seq)
    }
}

/// Random sessions, cameras and event sequences: the viewport client's annotations always
/// equal the session's annotations inside its area, its stream accounts for every seq, and
/// the same holds while its camera moves, over the antimeridian and near the poles.
@Suite struct InterestPropertyTests {
    static let places: [Coordinate] = [
        C(51.5, -0.12), C(35.68, 139.7), C(-33.9, 151.2), C(64.1, -21.9), C(-17.7, 178.0), C(-16.5, -179.9),
        C(78.2, 15.6), C(-77.8, 166.7), C(0, 180), C(0, -180), C(40.7, -74.0), C(1.3, 103.8),
    ]

    static func near(_ c: Coordinate, _ rng: inout SplitMix64, spread: Double) -> Coordinate {
        let lat = min(90, max(-90, c.latitude + rng.double(-spread...spread)))
        var lon = c.longitude + rng.double(-spread...spread)
        if lon > 180 { lon -= 360 }
        if lon < -180 { lon += 360 }
        return C(lat, lon)
    }

    static func randomAnnotation(_ id: String, _ rng: inout SplitMix64) -> Annotation {
        let at = rng.pick(places)
        switch rng.int(6) {
        case 0:
            return polyline(id, (0..<(2 + rng.int(4))).map { _ in near(at, &rng, spread: rng.chance(0.2) ? 40 : 0.5) })
        case 1:
            return polygon(id, (0..<(3 + rng.int(3))).map { _ in near(at, &rng, spread: 0.5) })
        default:
            return pin(id, at: near(at, &rng, spread: 0.3))
        }
    }

    static func randomCamera(_ rng: inout SplitMix64) -> Camera {
        let at = rng.pick(places)
        let lat = min(85, max(-85, at.latitude + rng.double(-0.2...0.2)))
        return cam(lat, at.longitude + rng.double(-0.2...0.2), zoom: rng.pick([1, 3, 6, 8, 9, 10, 12]),
                   pitch: rng.chance(0.2) ? rng.double(0...60) : 0, bearing: rng.chance(0.3) ? rng.double(0...359) : 0)
    }

    @Test(arguments: 0..<40)
    func mirrorEqualsTheSessionInsideTheArea(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed &* 7919 &+ 17)
        var world = World(policy: DragPolicy.allCases[Int(seed) % DragPolicy.allCases.count])
        let owner = try world.join("Owner", .owner)
        let editor = try world.join("Editor")
        let other = try world.join("Other")
        let watcher = try world.join("Watcher", .viewer)
        var next = 0
        for _ in 0..<(10 + rng.int(30)) {
            next += 1
            try world.add(Self.randomAnnotation("a\(next)", &rng), by: editor)
        }
        let viewport = Viewport(width: Double(rng.pick([320, 800, 1600])), height: Double(rng.pick([240, 600, 1000])))
        let margin = rng.pick([0, 0.25, 0.5, 1])
        let interest = Interest(mode: .viewport, margin: margin)
        try world.ok(.camera(.own, .end(Self.randomCamera(&rng), animated: false), viewport: viewport), by: watcher)

        var router = InterestRouter<String>(session: world.session)
        var mirror = ViewportMirror()
        var view = InterestView(interest, participant: world.session.participants[watcher])
        mirror.apply(router.setView(view, of: watcher, seq: world.session.seq, complete: true, in: world.session), in: world.session)
        mirror.lastSeq = world.session.seq

        for step in 0..<150 {
            let command: Command
            // The owner drags too: under the priority policy its `starting` preempts an editor's drag.
            var by = rng.chance(0.2) ? owner : rng.chance(0.7) ? editor : other
            let ids = world.session.annotations.keys.sorted()
            let points = ids.filter { world.session.annotations[$0]?.point != nil }
            switch rng.int(10) {
            case 0:
                next += 1
                command = .addAnnotation(Self.randomAnnotation("a\(next)", &rng))
            case 1 where !ids.isEmpty:
                let id = rng.pick(ids)
                var p = AnnotationPatch()
                if world.session.annotations[id]?.point != nil {
                    p.title = .some("retitled \(step)")
                    command = rng.chance(0.5) ? .updateAnnotation(id: id, p) : .removeAnnotation(id: id)
                } else {
                    p.coordinates = (0..<3).map { _ in Self.near(rng.pick(Self.places), &rng, spread: 0.5) }
                    command = .updateAnnotation(id: id, p)
                }
            case 2, 3, 4 where !points.isEmpty:
                let id = rng.pick(points)
                let state: DragState = switch world.session.dragState(of: id, by: by) {
                case .none: .starting
                case .starting, .dragging: rng.chance(0.8) ? .dragging : rng.pick([.ending, .canceling])
                default: .starting
                }
                // Moves jump between places now and then, in and out of the watcher's area.
                let to = rng.chance(0.3) ? Self.near(rng.pick(Self.places), &rng, spread: 0.2)
                    : Self.near(world.session.annotations[id]!.point!.coordinate, &rng, spread: 0.05)
                command = .drag(annotation: id, state: state, coordinate: state == .dragging ? to : nil)
            case 5, 6:
                by = watcher
                let camera = rng.chance(0.5) ? Self.randomCamera(&rng)
                    : { var c = world.session.participants[watcher]!.camera!; c.center = Self.near(c.center, &rng, spread: 0.5); return c }()
                command = .camera(.own, rng.chance(0.5) ? .changing(camera) : .end(camera, animated: false), viewport: nil)
            case 7 where !ids.isEmpty:
                command = .select(annotation: rng.pick(ids))
            case 8 where rng.chance(0.15):
                // A policy change cancels every drag, some of them back into the area.
                by = owner
                command = .configure(settingsPatch { $0.dragPolicy = rng.pick(DragPolicy.allCases) })
            default:
                command = .camera(.own, .begin(animated: false), viewport: nil)
                by = other
            }
            // As the server does: a removed annotation stays at hand until its events are routed.
            let departed: Annotation? = if case .removeAnnotation(let id, _) = command { world.session.annotations[id] } else { nil }
            let events: [Emitted]
            if rng.chance(0.05) {
                // Leases run out: idle drags are canceled by the server, some of them back into the area.
                world.advance(world.session.settings.leaseTimeout)
                events = world.session.expireDrags(at: world.now)
            } else {
                guard case .success(let accepted) = world.session.apply(command, from: by, at: world.now) else { continue }
                events = accepted.events
            }
            for (i, e) in events.enumerated() {
                let route = router.route(e, in: world.session, departed: departed, following: events[(i + 1)...])
                if let skipped = route.skipped.first(where: { $0.member == watcher }) { mirror.skip(through: skipped.seq) }
                for entering in route.entering where entering.member == watcher {
                    mirror.apply(.init(entered: [entering.annotation], left: [])) { _ in route.enteringDrags }
                    mirror.account(through: e.isTransient ? e.seq : e.seq - 1)
                }
                if route.everyone || route.recipients.contains(watcher) { mirror.receive(e) }
                if route.leaving.contains(watcher) {
                    mirror.apply(.init(entered: [], left: [route.annotation!])) { _ in [] }
                    mirror.account(through: e.seq)
                }
                if case .camera(.own, watcher, _, _) = e.event {
                    let newView = InterestView(interest, participant: world.session.participants[watcher])
                    if newView != view {
                        let change = router.setView(newView, of: watcher, seq: world.session.seq, in: world.session)
                        mirror.apply(change, in: world.session)
                        if !change.entered.isEmpty || !change.left.isEmpty {
                            router.accountThrough(world.session.seq, for: watcher)
                            mirror.lastSeq = world.session.seq
                        }
                        view = newView
                    }
                }
            }
            world.advance(.milliseconds(100))
            let area = try #require(view.annotationArea)
            let expected = world.session.annotations.filter { $0.value.bounds.intersects(area) }
            #expect(mirror.annotations == expected, "seed \(seed) step \(step): \(Set(mirror.annotations.keys).symmetricDifference(expected.keys).sorted())")
            #expect(mirror.gaps.isEmpty, "seed \(seed) step \(step): \(mirror.gaps)")
            let expectedDrags = world.session.drags.filter { expected[$0.key] != nil }
                .mapValues { Dictionary(uniqueKeysWithValues: $0.drags.map { ($0.participant, $0.state) }) }
            #expect(mirror.dragsInProgress == expectedDrags, "seed \(seed) step \(step): drags")
            if mirror.annotations != expected || !mirror.gaps.isEmpty || mirror.dragsInProgress != expectedDrags { return }
        }
    }
}
