import Testing
@testable import MeridianCore

/// Random sessions whose updates move annotations in and out of members' filters (kind,
/// metadata, style) and areas: each filtered member's mirror, built only from what the router
/// lets through, always equals the session's annotations in its area that its filter matches,
/// and its stream accounts for every seq; with a filter alone (everything-mode, the whole
/// world) and with a viewport, two members at once, changing filters as they go.
@Suite struct FilterPropertyTests {
    static let filters = [
        "kind = 'truck'",
        "metadata.team in ('red', 'blue') and metadata.load between 1 and 10",
        "not type = 'polygon' and (kind != 'car' or strokeColor = '#f00')",
        "kind = null or metadata.load > 8",
        "draggable = true and not metadata.team = 'green'",
        "metadata['team'] not in ('red') or zIndex >= 2",
    ]
    static let kinds: [String?] = ["truck", "car", "road", nil]
    static let teams: [JSONValue?] = [.string("red"), .string("blue"), .string("green"), .null, nil]

    static func randomMetadata(_ rng: inout SplitMix64) -> [String: JSONValue] {
        var m: [String: JSONValue] = [:]
        if let team = rng.pick(teams) { m["team"] = team }
        if rng.chance(0.8) { m["load"] = .number(Double(rng.int(16))) }
        return m
    }

    static func randomAnnotation(_ id: String, _ rng: inout SplitMix64) -> Annotation {
        var a = InterestPropertyTests.randomAnnotation(id, &rng)
        a.kind = rng.pick(kinds)
        a.metadata = randomMetadata(&rng)
        a.zIndex = rng.int(4)
        return a
    }

    /// A patch that changes what filters read, and now and then where the annotation is.
    static func randomPatch(for a: Annotation, _ rng: inout SplitMix64) -> AnnotationPatch {
        var p = AnnotationPatch()
        if rng.chance(0.5) { p.kind = .some(rng.pick(kinds)) }
        if rng.chance(0.5) { p.metadata = randomMetadata(&rng) }
        if rng.chance(0.3) { p.zIndex = rng.int(4) }
        if a.point != nil {
            if rng.chance(0.3) { p.draggable = rng.chance(0.7) }
            if rng.chance(0.3) { p.coordinate = InterestPropertyTests.near(rng.pick(InterestPropertyTests.places), &rng, spread: 0.3) }
        } else {
            if rng.chance(0.4) { p.strokeColor = .some(rng.chance(0.5) ? Color(hex: "#ff0000") : nil) }
            if rng.chance(0.3) {
                p.coordinates = (0..<3).map { _ in InterestPropertyTests.near(rng.pick(InterestPropertyTests.places), &rng, spread: 0.5) }
            }
        }
        return p
    }

    struct Watcher {
        var pid: ParticipantID
        var interest: Interest
        var view: InterestView
        var mirror = ViewportMirror()
    }

    @Test(arguments: 0..<40)
    func mirrorEqualsTheSessionInsideAreaAndFilter(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed &* 104_729 &+ 3)
        var world = World()
        let editor = try world.join("Editor")
        var next = 0
        for _ in 0..<(10 + rng.int(30)) {
            next += 1
            try world.add(Self.randomAnnotation("a\(next)", &rng), by: editor)
        }
        // The first alone (the whole world), the second with a viewport; or both with viewports
        // and the same filter, in odd seeds.
        var watchers: [Watcher] = []
        for n in 0..<2 {
            let pid = try world.join("Watcher\(n)", .viewer)
            let viewport = n == 1 || seed % 2 == 1
            let filter = try AnnotationFilter(seed % 2 == 1 ? Self.filters[Int(seed) % Self.filters.count] : rng.pick(Self.filters))
            let interest = viewport ? Interest(mode: .viewport, margin: rng.pick([0, 0.5, 1]), filter: filter) : Interest(mode: .everything, filter: filter)
            if viewport {
                try world.ok(.camera(.own, .end(InterestPropertyTests.randomCamera(&rng), animated: false),
                                     viewport: Viewport(width: 800, height: 600)), by: pid)
            }
            watchers.append(Watcher(pid: pid, interest: interest, view: InterestView(interest, participant: world.session.participants[pid])))
        }
        var router = InterestRouter<String>(session: world.session)
        for i in watchers.indices {
            watchers[i].mirror.apply(router.setView(watchers[i].view, of: watchers[i].pid, seq: world.session.seq, complete: true, in: world.session), in: world.session)
            watchers[i].mirror.lastSeq = world.session.seq
        }

        for step in 0..<150 {
            var command: Command
            var by = editor
            let ids = world.session.annotations.keys.sorted()
            let points = ids.filter { world.session.annotations[$0]?.point != nil }
            switch rng.int(12) {
            case 0:
                next += 1
                command = .addAnnotation(Self.randomAnnotation("a\(next)", &rng))
            case 1 where !ids.isEmpty:
                command = .removeAnnotation(id: rng.pick(ids))
            case 2, 3, 4, 5 where !ids.isEmpty:
                let id = rng.pick(ids)
                command = .updateAnnotation(id: id, Self.randomPatch(for: world.session.annotations[id]!, &rng))
            case 6, 7 where !points.isEmpty:
                let id = rng.pick(points)
                let state: DragState = switch world.session.dragState(of: id, by: by) {
                case .none: .starting
                case .starting, .dragging: rng.chance(0.8) ? .dragging : rng.pick([.ending, .canceling])
                default: .starting
                }
                let to = InterestPropertyTests.near(rng.pick(InterestPropertyTests.places), &rng, spread: 0.2)
                command = .drag(annotation: id, state: state, coordinate: state == .dragging ? to : nil)
            case 8:
                // A watcher with a viewport moves its camera.
                let w = watchers[rng.int(watchers.count)]
                guard w.interest.mode == .viewport else { continue }
                by = w.pid
                command = .camera(.own, .end(InterestPropertyTests.randomCamera(&rng), animated: false), viewport: nil)
            case 9:
                // A watcher changes its filter: entered and left by set difference.
                let i = rng.int(watchers.count)
                watchers[i].interest.filter = try AnnotationFilter(rng.pick(Self.filters))
                watchers[i].view = InterestView(watchers[i].interest, participant: world.session.participants[watchers[i].pid])
                let change = router.setView(watchers[i].view, of: watchers[i].pid, seq: world.session.seq, in: world.session)
                watchers[i].mirror.apply(change, in: world.session)
                // The answer to an `interest` request is always an `interest` message.
                router.accountThrough(world.session.seq, for: watchers[i].pid)
                watchers[i].mirror.account(through: world.session.seq)
                try check(world, watchers, seed: seed, step: step)
                continue
            default:
                command = .camera(.own, .begin(animated: false), viewport: nil)
            }
            let departed: Annotation? = if case .removeAnnotation(let id, _) = command { world.session.annotations[id] } else { nil }
            guard case .success(let accepted) = world.session.apply(command, from: by, at: world.now) else { continue }
            for (k, e) in accepted.events.enumerated() {
                let route = router.route(e, in: world.session, departed: departed, following: accepted.events[(k + 1)...])
                for i in watchers.indices {
                    let pid = watchers[i].pid
                    if let skipped = route.skipped.first(where: { $0.member == pid }) { watchers[i].mirror.skip(through: skipped.seq) }
                    for entering in route.entering where entering.member == pid {
                        watchers[i].mirror.apply(.init(entered: [entering.annotation], left: [])) { _ in route.enteringDrags }
                        watchers[i].mirror.account(through: e.isTransient ? e.seq : e.seq - 1)
                    }
                    if route.everyone || route.recipients.contains(pid) { watchers[i].mirror.receive(e) }
                    if route.leaving.contains(pid) {
                        watchers[i].mirror.apply(.init(entered: [], left: [route.annotation!])) { _ in [] }
                        watchers[i].mirror.account(through: e.seq)
                    }
                    if case .camera(.own, pid, _, _) = e.event {
                        let view = InterestView(watchers[i].interest, participant: world.session.participants[pid])
                        if view != watchers[i].view {
                            let change = router.setView(view, of: pid, seq: world.session.seq, in: world.session)
                            watchers[i].mirror.apply(change, in: world.session)
                            if !change.entered.isEmpty || !change.left.isEmpty {
                                router.accountThrough(world.session.seq, for: pid)
                                watchers[i].mirror.lastSeq = world.session.seq
                            }
                            watchers[i].view = view
                        }
                    }
                }
            }
            world.advance(.milliseconds(100))
            try check(world, watchers, seed: seed, step: step)
        }
    }

    struct Mismatch: Error, CustomStringConvertible { var description: String }

    /// Every watcher holds exactly the session's annotations in its area that its filter matches.
    func check(_ world: World, _ watchers: [Watcher], seed: UInt64, step: Int) throws {
        for w in watchers {
            let area = try #require(w.view.annotationArea)
            let filter = try #require(w.interest.filter)
            let expected = world.session.annotations.filter { $0.value.bounds.intersects(area) && filter.matches($0.value) }
            let same = w.mirror.annotations == expected
            #expect(same, "seed \(seed) step \(step) \(w.pid) [\(filter)]: \(Set(w.mirror.annotations.keys).symmetricDifference(expected.keys).sorted())")
            #expect(w.mirror.gaps.isEmpty, "seed \(seed) step \(step) \(w.pid): \(w.mirror.gaps)")
            let drags = world.session.drags.filter { expected[$0.key] != nil }
                .mapValues { Dictionary(uniqueKeysWithValues: $0.drags.map { ($0.participant, $0.state) }) }
            #expect(w.mirror.dragsInProgress == drags, "seed \(seed) step \(step) \(w.pid): drags")
            if !same || !w.mirror.gaps.isEmpty || w.mirror.dragsInProgress != drags { throw Mismatch(description: "stopped at the first difference") }
        }
    }
}
