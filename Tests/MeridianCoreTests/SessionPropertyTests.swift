import Testing
@testable import MeridianCore

// MARK: Deterministic randomness

/// SplitMix64: a tiny seeded generator, so every run replays the same commands.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func int(_ n: Int) -> Int { Int.random(in: 0..<n, using: &self) }
    mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &self) < p }
    mutating func pick<T>(_ items: [T]) -> T { items[int(items.count)] }
    mutating func double(_ r: ClosedRange<Double>) -> Double { Double.random(in: r, using: &self) }
}

// MARK: What a client can know

/// One drag as a client sees it (no lease timing).
struct ClientDrag: Hashable {
    var participant: ParticipantID
    var state: DragState
    var coordinate: Coordinate
}

struct ClientDragGroup: Hashable {
    var origin: Coordinate
    var drags: [ClientDrag]
}

/// The session's observable state: everything a client is told about.
struct ClientState: Hashable {
    var seq: UInt64
    var settings: SessionSettings
    var annotations: [String: Annotation]
    var participants: [ParticipantID: Participant]
    var sharedCamera: Camera?
    var cameraLeaseHolder: ParticipantID?
    var callout: Callout?
    var calloutShownBy: ParticipantID?
    var drags: [String: ClientDragGroup]

    init(_ s: Session) {
        seq = s.seq
        settings = s.settings
        annotations = s.annotations
        participants = s.participants.filter { !$0.value.hidden }
        sharedCamera = s.sharedCamera
        cameraLeaseHolder = s.cameraLeaseHolder
        callout = s.callout
        calloutShownBy = s.calloutShownBy
        drags = s.drags.mapValues {
            ClientDragGroup(origin: $0.origin, drags: $0.drags.map { ClientDrag(participant: $0.participant, state: $0.state, coordinate: $0.coordinate) })
        }
    }

    /// The paths of the fields that differ, for failure messages.
    func diff(_ other: ClientState) -> String {
        fieldDiff(self, other, path: "state").joined(separator: "\n")
    }
}

/// Field-by-field differences between two values, as `path: a vs b` lines.
func fieldDiff(_ a: Any, _ b: Any, path: String) -> [String] {
    let (ma, mb) = (Mirror(reflecting: a), Mirror(reflecting: b))
    if ma.displayStyle == .dictionary, mb.displayStyle == .dictionary {
        func entries(_ m: Mirror) -> [String: Any] {
            Dictionary(uniqueKeysWithValues: m.children.map {
                let pair = Array(Mirror(reflecting: $0.value).children)
                return ("\(pair[0].value)", pair[1].value)
            })
        }
        let (ea, eb) = (entries(ma), entries(mb))
        return Set(ea.keys).union(eb.keys).sorted().flatMap { key -> [String] in
            switch (ea[key], eb[key]) {
            case let (x?, y?): fieldDiff(x, y, path: "\(path)[\(key)]")
            case let (x, y): ["\(path)[\(key)]: mirror \(x.map { "\($0)" } ?? "absent") vs server \(y.map { "\($0)" } ?? "absent")"]
            }
        }
    }
    if ma.displayStyle == .struct, mb.displayStyle == .struct, !ma.children.isEmpty {
        return zip(ma.children, mb.children).flatMap { fieldDiff($0.value, $1.value, path: "\(path).\($0.label ?? "?")") }
    }
    return "\(a)" == "\(b)" ? [] : ["\(path): mirror \(a) vs server \(b)"]
}

/// A client's copy of the session: starts from a snapshot and applies the
/// broadcast events it receives. Written independently of the session's code.
struct ClientMirror {
    let me: ParticipantID
    var state: ClientState
    var problems: [String] = []
    /// A slow receiver queues what it is sent; a newer transient event
    /// replaces an older unsent one with the same conflation key.
    var slow = false
    var queue: [Emitted] = []

    mutating func send(_ emitted: Emitted) {
        guard emitted.excluding != me else { return }
        guard slow else { return receive(emitted) }
        if let key = emitted.conflation { queue.removeAll { $0.conflation == key } }
        queue.append(emitted)
    }

    /// Delivers everything queued.
    mutating func flush() {
        let pending = queue
        queue = []
        for e in pending { receive(e) }
    }

    private mutating func receive(_ emitted: Emitted) {
        if emitted.isTransient {
            if emitted.seq != state.seq { problems.append("transient event with seq \(emitted.seq), expected \(state.seq)") }
        } else {
            if emitted.seq != state.seq + 1 { problems.append("discrete event with seq \(emitted.seq), expected \(state.seq + 1)") }
            state.seq = emitted.seq
        }
        apply(emitted.event)
        // An ending commits a coordinate: its seq is the annotation's revision (`revision` on the wire).
        if case .drag(let id, _, .ending, _, _) = emitted.event { state.annotations[id]?.revision = emitted.seq }
    }

    private mutating func removeParticipant(_ id: ParticipantID) {
        state.participants[id] = nil
        for other in state.participants.keys where state.participants[other]?.following == .participant(id) {
            state.participants[other]?.following = nil
        }
    }

    private mutating func apply(_ event: Event) {
        switch event {
        case .participantJoined(let p):
            state.participants[p.id] = p
        case .participantLeft(let id, _):
            removeParticipant(id)
        case .presence(let joined, let left):
            for p in joined { state.participants[p.id] = p }
            for l in left { removeParticipant(l.participant) }
        case .camera(.own, let pid, let phase, let viewport):
            if let c = phase.camera { state.participants[pid]?.camera = c }
            if let viewport { state.participants[pid]?.viewport = viewport }
        case .camera(.shared, _, let phase, _):
            if let c = phase.camera { state.sharedCamera = c }
        case .cameraLease(let holder, _):
            state.cameraLeaseHolder = holder
        case .follow(let pid, let target):
            state.participants[pid]?.following = target
        case .annotationAdded(let a), .annotationUpdated(let a):
            state.annotations[a.id] = a
        case .annotationRemoved(let id):
            state.annotations[id] = nil
            if state.drags[id] != nil { problems.append("annotation \(id) removed with drags left") }
        case .selection(let pid, let id, _):
            state.participants[pid]?.selection = id
        case .calloutShown(let c, let by):
            state.callout = c
            state.calloutShownBy = by
        case .calloutHidden:
            state.callout = nil
            state.calloutShownBy = nil
        case .calloutTapped:
            break
        case .drag(let id, let pid, let dragState, let c, _):
            applyDrag(id, pid, dragState, c)
        case .mapLoad(let pid, let m):
            state.participants[pid]?.mapLoad = m
        case .location(let pid, let l):
            state.participants[pid]?.location = l
        case .settings(let s):
            state.settings = s
        case .undone:
            break // the change it makes follows
        }
    }

    private mutating func applyDrag(_ id: String, _ pid: ParticipantID, _ dragState: DragState, _ c: Coordinate) {
        setCoordinate(id, c)
        var group = state.drags[id]
        let index = group?.drags.firstIndex { $0.participant == pid }
        switch dragState {
        case .starting:
            if index != nil { problems.append("\(pid) starts a drag of \(id) twice") }
            if group == nil { group = ClientDragGroup(origin: c, drags: []) }
            group!.drags.append(ClientDrag(participant: pid, state: .starting, coordinate: c))
        case .dragging:
            guard let index else { problems.append("move of \(id) by \(pid) without a drag"); return }
            group!.drags[index].state = .dragging
            group!.drags[index].coordinate = c
        case .ending, .canceling:
            guard let index else { problems.append("\(dragState) of \(id) by \(pid) without a drag"); return }
            group!.drags.remove(at: index)
            if dragState == .ending { group!.origin = c }
            if group!.drags.isEmpty { group = nil }
        case .none:
            if index != nil { problems.append("none for \(id) by \(pid) while its drag goes on") }
        }
        state.drags[id] = group
    }

    private mutating func setCoordinate(_ id: String, _ c: Coordinate) {
        guard case .point(var p) = state.annotations[id]?.shape else {
            problems.append("drag event for \(id), which is not a point")
            return
        }
        p.coordinate = c
        state.annotations[id]?.shape = .point(p)
    }
}

// MARK: Random commands

struct CommandGenerator {
    var rng: SplitMix64
    static let pins = ["a0", "a1", "a2", "a3"]
    static let ids = pins + ["s0", "l0", "g0", "zz"]

    mutating func coordinate(valid: Double = 0.9) -> Coordinate {
        if rng.chance(valid) { return C(rng.double(-85...85), rng.double(-180...180)) }
        return rng.pick([C(91, 0), C(.nan, 0), C(0, 200), C(0, -.infinity), C(-95, 10)])
    }

    mutating func camera() -> Camera {
        if rng.chance(0.1) { return rng.pick([cam(91, 0), cam(.nan, 0), cam(0, 0, zoom: 30), cam(0, 0, pitch: 90), cam(0, .infinity)]) }
        return cam(rng.double(-90...90), rng.double(-400...400), zoom: rng.double(0...24), pitch: rng.double(0...85), bearing: rng.double(-720...720))
    }

    mutating func phase() -> CameraPhase {
        switch rng.int(3) {
        case 0: .begin(animated: rng.chance(0.5))
        case 1: .changing(camera())
        default: .end(camera(), animated: rng.chance(0.5))
        }
    }

    mutating func viewport() -> Viewport? {
        switch rng.int(4) {
        case 0: Viewport(width: rng.double(1...2_000), height: rng.double(1...2_000))
        case 1 where rng.chance(0.3): Viewport(width: 0, height: 100)
        default: nil
        }
    }

    mutating func annotation(_ id: String) -> Annotation {
        var a: Annotation
        switch rng.int(4) {
        case 0, 1:
            a = point(id, at: coordinate(valid: 0.95), title: rng.pick([nil, "", "T"]), zIndex: rng.int(5) - 2,
                      enabled: rng.chance(0.85), draggable: rng.chance(0.8), canShowCallout: rng.chance(0.6))
        case 2:
            a = Annotation(id: id, shape: .polyline(Polyline(coordinates: (0..<rng.int(4)).map { _ in coordinate(valid: 0.97) },
                                                              alpha: rng.chance(0.9) ? rng.double(0...1) : 1.5)), zIndex: rng.int(5))
        default:
            a = Annotation(id: id, shape: .polygon(Polygon(coordinates: (0..<(2 + rng.int(4))).map { _ in coordinate(valid: 0.97) })), title: "G")
        }
        if rng.chance(0.03) { a.metadata = ["blob": .string(String(repeating: "x", count: 5_000))] }
        return a
    }

    mutating func annotationPatch() -> AnnotationPatch {
        var p = AnnotationPatch()
        switch rng.int(10) {
        case 0, 9: p.coordinate = coordinate()
        case 1: p.title = rng.pick([.some(nil), "", "Title", .some(String(repeating: "t", count: 300))])
        case 2: p.enabled = rng.chance(0.7)
        case 3: p.draggable = rng.chance(0.7)
        case 4: p.canShowCallout = rng.chance(0.5)
        case 5: p.zIndex = rng.int(7) - 3
        case 6: p.lineWidth = rng.double(-1...10)
        case 7: p.alpha = rng.double(0...1.2)
        default: p.coordinates = (0..<rng.int(5)).map { _ in coordinate() }
        }
        if rng.chance(0.2) { p.subtitle = "sub" }
        return p
    }

    mutating func callout(participants: [ParticipantID]) -> Callout {
        let anchor: Callout.Anchor = switch rng.int(3) {
        case 0: .coordinate(coordinate())
        case 1: .annotation(rng.pick(Self.ids))
        default: .participant(rng.pick(participants + ["p999"]))
        }
        let accessory: Callout.Accessory = rng.pick([.hidden, .button(.detailDisclosure), .image("info"), .image("")])
        return Callout(title: rng.pick(["C", "", String(repeating: "c", count: 300)]), accessory: accessory, anchor: anchor)
    }

    mutating func location() -> UserLocation? {
        guard rng.chance(0.9) else { return nil }
        return UserLocation(
            coordinate: coordinate(valid: 0.95), accuracy: rng.chance(0.95) ? rng.double(0...20_000) : -1,
            heading: rng.chance(0.5) ? rng.double(0...360) : nil, course: rng.chance(0.5) ? rng.double(0...365) : nil,
            tracking: rng.pick(TrackingMode.allCases), authorization: rng.pick(AccuracyAuthorization.allCases))
    }

    /// Mostly keeps the scenario's policy: a switch away is rare and usually switched back.
    mutating func settings(policy: DragPolicy, current: DragPolicy) -> SettingsPatch {
        var p = SettingsPatch()
        switch rng.int(5) {
        case 0: p.tint = rng.pick([Color(hex: "#f00")!, .defaultTint])
        case 1: p.leaseTimeout = rng.pick([.seconds(1), .seconds(4), .seconds(10), .milliseconds(10)])
        case 2:
            let bounds = rng.pick([nil, Bounds(southWest: C(-60, 170), northEast: C(60, -170)), Bounds(southWest: C(-40, -60), northEast: C(40, 60))])
            p.constraints = CameraConstraints(bounds: bounds, minZoom: rng.pick([nil, 2, 9]), maxZoom: rng.pick([nil, 5, 18]),
                                              maxPitch: rng.pick([nil, 30]), policy: rng.pick(ConstraintPolicy.allCases))
        case 3: p.dragPolicy = current != policy ? (rng.chance(0.7) ? policy : current) : (rng.chance(0.75) ? policy : rng.pick(DragPolicy.allCases))
        default: p.styleURL = "mapbox://styles/\(rng.int(3))"
        }
        return p
    }

    mutating func command(participants: [ParticipantID], policy: DragPolicy, current: DragPolicy) -> Command {
        let others = participants + ["p999"]
        switch rng.int(100) {
        case 0..<8: return .camera(.own, phase(), viewport: viewport())
        case 8..<12: return .camera(.shared, phase(), viewport: rng.chance(0.1) ? viewport() : nil)
        case 12..<15: return .acquireCameraLease(force: rng.chance(0.5))
        case 15..<17: return .releaseCameraLease
        case 17..<20: return .follow(rng.pick([nil, .shared, .participant(rng.pick(others))]))
        case 20..<26: return .addAnnotation(annotation(rng.pick(Self.ids)))
        case 26..<32: return .updateAnnotation(id: rng.pick(Self.ids), annotationPatch())
        case 32..<34: return .removeAnnotation(id: rng.pick(Self.ids))
        case 34..<39: return .select(annotation: rng.pick(Self.ids))
        case 39..<41: return .deselect
        case 41..<44: return .showCallout(callout(participants: participants))
        case 44..<45: return .hideCallout
        case 45..<47: return .tapCallout(rng.pick(Callout.Part.allCases))
        case 47..<85:
            // Competing drags on a few pins, with every state and some bad coordinates.
            let id = rng.chance(0.9) ? rng.pick(Array(Self.pins.prefix(2))) : rng.pick(Self.ids)
            let state: DragState = rng.chance(0.7) ? rng.pick([.starting, .dragging, .dragging, .ending, .canceling]) : rng.pick(DragState.allCases)
            let c: Coordinate? = state == .dragging || rng.chance(0.3) ? (rng.chance(0.05) ? nil : coordinate(valid: 0.95)) : nil
            return .drag(annotation: id, state: state, coordinate: c)
        case 85..<89: return .mapLoad(MapLoad(state: rng.pick(MapLoadState.allCases), message: rng.pick([nil, "", "boom"])))
        case 89..<96: return .location(location())
        default: return .configure(settings(policy: policy, current: current))
        }
    }
}

// MARK: The property

@Suite struct SessionPropertyTests {
    static let seeds: [UInt64] = Array(1...200)
    static let steps = 300

    /// What the random runs exercised, so a generator that stops reaching a
    /// rule fails instead of passing vacuously.
    struct Coverage {
        var accepted: [String: Int] = [:]
        var refused: [String: Int] = [:]
        var dragReasons: [String: Int] = [:]
        var maxConcurrentDrags = 0
    }

    @Test(arguments: DragPolicy.allCases)
    func mirrorsConvergeAndRulesHold(policy: DragPolicy) {
        var coverage = Coverage()
        for seed in Self.seeds {
            if !run(seed: seed, policy: policy, coverage: &coverage) { return }
        }
        let commands = ["camera.begin", "camera.changing", "camera.end", "camera.lease.acquire", "camera.lease.release", "follow",
                        "annotation.add", "annotation.update", "annotation.remove", "select", "deselect", "callout.show",
                        "callout.hide", "callout.tap", "drag", "map.load", "location", "session.configure"]
        for name in commands {
            #expect(coverage.accepted[name, default: 0] >= 20, "\(policy): \(name) accepted \(coverage.accepted[name, default: 0]) times")
        }
        var codes: [SessionError.Code] = [.invalidField, .forbidden, .notFound, .alreadyExists, .limitExceeded, .illegalDragTransition,
                                          .notDraggable, .beingDragged, .notSelectable, .calloutNotAllowed, .cameraLeaseHeld,
                                          .cameraLeaseRequired, .cameraOutOfBounds]
        if policy != .lastWriterWins { codes.append(.dragConflict) }
        for code in codes {
            #expect(coverage.refused[code.rawValue, default: 0] >= 5, "\(policy): \(code.rawValue) refused \(coverage.refused[code.rawValue, default: 0]) times")
        }
        var reasons: [DragEndReason] = [.leaseExpired, .holderLeft, .annotationRemoved, .annotationChanged, .policyChanged]
        if policy == .priority { reasons.append(.preempted) }
        for r in reasons {
            #expect(coverage.dragReasons[r.rawValue, default: 0] >= 5, "\(policy): drags ended for \(r.rawValue) \(coverage.dragReasons[r.rawValue, default: 0]) times")
        }
        if policy == .lastWriterWins { #expect(coverage.maxConcurrentDrags >= 3) }
    }

    /// Runs one seeded scenario; records an issue naming the seed and returns
    /// false at the first broken property.
    func run(seed: UInt64, policy: DragPolicy, coverage: inout Coverage) -> Bool {
        var gen = CommandGenerator(rng: SplitMix64(seed: seed &* 1_000_003 &+ UInt64(DragPolicy.allCases.firstIndex(of: policy)!)))
        var session = Session(id: "prop", epoch: "e", settings: SessionSettings(dragPolicy: policy, leaseTimeout: .seconds(4)))
        var now: Duration = .zero
        var mirrors: [ParticipantID: ClientMirror] = [:]
        var lastSeq: UInt64 = 0
        var step = 0
        let context = { "seed \(seed) policy \(policy.rawValue) step \(step)" }

        /// Expects `ok`, naming the seed and step; false ends the run.
        func check(_ ok: Bool, _ message: @autoclosure () -> String) -> Bool {
            #expect(ok, "\(context()): \(message())")
            return ok
        }

        func fail(_ message: String) -> Bool { check(false, message) }

        func broadcast(_ events: [Emitted]) -> Bool {
            for e in events {
                if e.isTransient {
                    guard check(e.seq == lastSeq, "transient \(e.event) carries seq \(e.seq), current is \(lastSeq)") else { return false }
                } else {
                    guard check(e.seq == lastSeq + 1, "discrete \(e.event) has seq \(e.seq) after \(lastSeq)") else { return false }
                    lastSeq = e.seq
                }
                if case .drag(_, _, _, _, let reason?) = e.event { coverage.dragReasons[reason.rawValue, default: 0] += 1 }
                for pid in mirrors.keys { mirrors[pid]!.send(e) }
            }
            return true
        }

        func join(_ roleDice: Int) -> Bool {
            let role: Role = roleDice % 10 < 2 ? .owner : roleDice % 10 < 7 ? .editor : .viewer
            let hidden = roleDice % 11 == 10
            switch session.join(JoinRequest(name: "N\(session.joinCount + 1)", role: role, hidden: hidden), at: now) {
            case .failure(let e): return fail("join refused: \(e)")
            case .success(let (pid, events)):
                guard broadcast(events) else { return false }
                mirrors[pid] = ClientMirror(me: pid, state: ClientState(session), slow: gen.rng.chance(0.5))
                return true
            }
        }

        // Setup: an owner who places the shared annotations, then 6–10 in all.
        guard join(0) else { return false }
        let owner = session.participants.keys.first!
        for a in [pin("a0"), pin("a1"), pin("a2", at: C(-30, 179)), point("s0", title: "S", canShowCallout: true), polyline("l0")] {
            guard case .success(let ok) = session.apply(.addAnnotation(a), from: owner, at: now), broadcast(ok.events) else {
                return fail("setup of \(a.id) failed")
            }
        }
        for i in 0..<(5 + gen.rng.int(5)) { guard join(i + 1) else { return false } }

        for s in 1...Self.steps {
            step = s
            let ids = session.participants.keys.sorted()
            let dice = gen.rng.int(100)
            if dice < 8 {
                now += .milliseconds(Int64(gen.rng.int(6_000)))
                guard broadcast(session.expireDrags(at: now)) else { return false }
            } else if dice < 10, ids.count > 6 {
                let pid = gen.rng.pick(ids)
                mirrors[pid] = nil
                guard broadcast(session.leave(pid, reason: "closed", at: now)) else { return false }
            } else if dice < 12, ids.count < 10 {
                guard join(gen.rng.int(1_000)) else { return false }
            } else {
                let pid = gen.rng.chance(0.02) ? "p999" : gen.rng.pick(ids)
                let command = gen.command(participants: ids, policy: policy, current: session.settings.dragPolicy)
                let before = session.contents
                switch session.apply(command, from: pid, at: now) {
                case .success(let accepted):
                    coverage.accepted[command.name, default: 0] += 1
                    guard broadcast(accepted.events) else { return false }
                case .failure(let error):
                    coverage.refused[error.code.rawValue, default: 0] += 1
                    // (c) a refused command changes nothing.
                    guard check(session.contents == before, "refused \(command) by \(pid) (\(error)) changed the session") else { return false }
                }
            }

            // (d) the session's seq is the last discrete one broadcast.
            guard check(session.seq == lastSeq, "session seq \(session.seq), last broadcast \(lastSeq)") else { return false }
            // (a) one drag per annotation under leased policies.
            if session.settings.dragPolicy != .lastWriterWins {
                if let (id, g) = session.drags.first(where: { $0.value.drags.count > 1 }) {
                    return fail("\(id) has \(g.drags.count) drags under \(session.settings.dragPolicy)")
                }
            }
            coverage.maxConcurrentDrags = max(coverage.maxConcurrentDrags, session.drags.values.map(\.drags.count).max() ?? 0)
            // (e) what the session holds is consistent with its rules.
            if let problem = Self.invariantViolation(session) { return fail(problem) }
            // (b) every client's mirror equals the server.
            let server = ClientState(session)
            for pid in mirrors.keys where gen.rng.chance(0.3) { mirrors[pid]!.flush() }
            for (pid, mirror) in mirrors where mirror.queue.isEmpty {
                guard check(mirror.problems.isEmpty, "mirror of \(pid): \(mirror.problems)") else { return false }
                guard check(mirror.state == server, "mirror of \(pid) diverged:\n\(mirror.state.diff(server))") else { return false }
            }
        }
        return true
    }

    /// Rules that hold between any two steps, whatever came before.
    static func invariantViolation(_ s: Session) -> String? {
        for (id, g) in s.drags {
            guard let a = s.annotations[id], a.enabled, a.point?.draggable == true else { return "drag of \(id), which may not be dragged" }
            guard !g.drags.isEmpty, g.drags.allSatisfy({ s.participants[$0.participant]?.role.canEdit == true && [.starting, .dragging].contains($0.state) })
            else { return "stale drag group \(id): \(g)" }
            guard Set(g.drags.map(\.participant)).count == g.drags.count else { return "a participant drags \(id) twice" }
        }
        if let holder = s.cameraLeaseHolder, s.participants[holder]?.role.canEdit != true { return "camera lease held by \(holder)" }
        for p in s.participants.values {
            if let id = p.selection, s.annotations[id]?.enabled != true { return "\(p.id) selects \(id), which cannot be selected" }
            if case .participant(let other) = p.following, other == p.id || s.participants[other] == nil { return "\(p.id) follows \(other)" }
            if let c = p.camera, !(abs(c.center.latitude) <= Geo.maxMercatorLatitude && (-180..<180).contains(c.center.longitude) && (0..<360).contains(c.bearing)) {
                return "\(p.id) has a camera not in normal form: \(c)"
            }
            if let l = p.location, l.authorization == .reduced {
                let onGrid = [l.coordinate.latitude, l.coordinate.longitude].allSatisfy {
                    abs($0 / UserLocation.coarseGrid - ($0 / UserLocation.coarseGrid).rounded()) < 1e-9
                }
                guard onGrid, l.accuracy >= UserLocation.coarseAccuracy, l.heading == nil, l.course == nil else { return "\(p.id) holds a precise reduced location \(l)" }
            }
        }
        switch s.callout?.anchor {
        case .annotation(let id):
            if s.annotations[id]?.showsCalloutWhenSelected != true { return "callout anchored to \(id), which may not show one" }
        case .participant(let pid):
            if s.participants[pid]?.location == nil || s.participants[pid]?.hidden == true { return "callout anchored to \(pid), who shares no location" }
        default: break
        }
        return nil
    }

    @Test func generatorIsDeterministic() {
        var a = SplitMix64(seed: 42), b = SplitMix64(seed: 42)
        #expect((0..<100).map { _ in a.next() } == (0..<100).map { _ in b.next() })
        var z = SplitMix64(seed: 0)
        #expect(z.next() == 0xE220_A839_7B1D_CDAF)
    }
}
