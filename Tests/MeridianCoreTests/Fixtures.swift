import Testing
@testable import MeridianCore

/// Shorthand for a coordinate.
func C(_ latitude: Double, _ longitude: Double) -> Coordinate {
    Coordinate(latitude: latitude, longitude: longitude)
}

func cam(_ lat: Double, _ lon: Double, zoom: Double = 10, pitch: Double = 0, bearing: Double = 0) -> Camera {
    Camera(center: C(lat, lon), zoom: zoom, pitch: pitch, bearing: bearing)
}

func point(
    _ id: String, at c: Coordinate = C(10, 20), title: String? = nil, zIndex: Int = 0, enabled: Bool = true,
    draggable: Bool = false, canShowCallout: Bool = false, calloutOffset: Offset = .zero
) -> Annotation {
    Annotation(
        id: id, shape: .point(Point(coordinate: c, calloutOffset: calloutOffset, draggable: draggable, canShowCallout: canShowCallout)),
        title: title, zIndex: zIndex, enabled: enabled)
}

/// A draggable point annotation.
func pin(_ id: String, at c: Coordinate = C(10, 20)) -> Annotation {
    point(id, at: c, draggable: true)
}

func polyline(_ id: String, _ coords: [Coordinate] = [C(0, 0), C(1, 1)]) -> Annotation {
    Annotation(id: id, shape: .polyline(Polyline(coordinates: coords)))
}

func polygon(_ id: String, _ coords: [Coordinate] = [C(0, 0), C(0, 1), C(1, 1)]) -> Annotation {
    Annotation(id: id, shape: .polygon(Polygon(coordinates: coords)))
}

/// `a` as the session holds it once the event with seq `revision` changed it.
func revised(_ a: Annotation, _ revision: UInt64) -> Annotation {
    var a = a
    a.revision = revision
    return a
}

func patch(_ change: (inout AnnotationPatch) -> Void) -> AnnotationPatch {
    var p = AnnotationPatch()
    change(&p)
    return p
}

func settingsPatch(_ change: (inout SettingsPatch) -> Void) -> SettingsPatch {
    var p = SettingsPatch()
    change(&p)
    return p
}

struct UnexpectedOutcome: Error, CustomStringConvertible {
    var description: String
}

/// A session driven by a manual clock, with helpers that apply commands and
/// check the outcome.
struct World {
    var session: Session
    var now: Duration = .zero

    init(_ settings: SessionSettings = SessionSettings()) {
        session = Session(id: "s1", epoch: "e1", settings: settings)
    }

    init(_ session: Session) {
        self.session = session
    }

    init(limits change: (inout SessionLimits) -> Void) {
        var limits = SessionLimits()
        change(&limits)
        self.init(Session(id: "s1", epoch: "e1", limits: limits))
    }

    init(policy: DragPolicy) {
        self.init(SessionSettings(dragPolicy: policy))
    }

    var state: Session.Contents { session.contents }

    func annotation(_ id: String) -> Annotation? { session.annotations[id] }
    func coordinate(_ id: String) -> Coordinate? { session.annotations[id]?.point?.coordinate }
    func participant(_ id: ParticipantID) -> Participant? { session.participants[id] }

    @discardableResult
    mutating func join(_ name: String, _ role: Role = .editor, hidden: Bool = false, sourceLocation: SourceLocation = #_sourceLocation) throws -> ParticipantID {
        switch session.join(JoinRequest(name: name, role: role, hidden: hidden), at: now) {
        case .success(let (pid, _)): return pid
        case .failure(let e):
            Issue.record("join \(name) refused: \(e)", sourceLocation: sourceLocation)
            throw e
        }
    }

    /// Applies a command that must be accepted.
    @discardableResult
    mutating func ok(_ command: Command, by pid: ParticipantID, sourceLocation: SourceLocation = #_sourceLocation) throws -> Accepted {
        switch session.apply(command, from: pid, at: now) {
        case .success(let accepted): return accepted
        case .failure(let e):
            Issue.record("\(command.name) by \(pid) refused: \(e)", sourceLocation: sourceLocation)
            throw e
        }
    }

    /// The events of an accepted command.
    mutating func events(_ command: Command, by pid: ParticipantID, sourceLocation: SourceLocation = #_sourceLocation) throws -> [Event] {
        try ok(command, by: pid, sourceLocation: sourceLocation).events.map(\.event)
    }

    /// Applies a command that must be refused with `code` (and `field`, if
    /// given), and checks that the whole session, seq included, is unchanged.
    @discardableResult
    mutating func refuse(
        _ command: Command, by pid: ParticipantID, _ code: SessionError.Code, field: String? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> SessionError {
        let before = state
        switch session.apply(command, from: pid, at: now) {
        case .success(let accepted):
            Issue.record("\(command.name) by \(pid) accepted, expected \(code.rawValue): \(accepted.events)", sourceLocation: sourceLocation)
            throw UnexpectedOutcome(description: "accepted")
        case .failure(let e):
            #expect(e.code == code, "\(e)", sourceLocation: sourceLocation)
            if let field { #expect(e.field == field, "\(e)", sourceLocation: sourceLocation) }
            #expect(state == before, "refused \(command.name) changed the session", sourceLocation: sourceLocation)
            return e
        }
    }

    // Drag shorthands.
    @discardableResult
    mutating func drag(_ id: String, _ state: DragState, _ c: Coordinate? = nil, by pid: ParticipantID, sourceLocation: SourceLocation = #_sourceLocation) throws -> [Event] {
        try events(.drag(annotation: id, state: state, coordinate: c), by: pid, sourceLocation: sourceLocation)
    }

    mutating func add(_ a: Annotation, by pid: ParticipantID, sourceLocation: SourceLocation = #_sourceLocation) throws {
        try ok(.addAnnotation(a), by: pid, sourceLocation: sourceLocation)
    }

    mutating func advance(_ d: Duration) { now += d }
}

/// A world with one owner (`p1`), one editor (`p2`) and one viewer (`p3`).
func trio(_ settings: SessionSettings = SessionSettings()) throws -> (World, owner: ParticipantID, editor: ParticipantID, viewer: ParticipantID) {
    var w = World(settings)
    let o = try w.join("Olive", .owner)
    let e = try w.join("Ed", .editor)
    let v = try w.join("Vi", .viewer)
    return (w, o, e, v)
}

/// The drag event fields, for compact assertions.
struct DragStep: Hashable, CustomStringConvertible {
    var annotation: String
    var participant: ParticipantID
    var state: DragState
    var coordinate: Coordinate
    var reason: DragEndReason?
    var description: String { "\(annotation)/\(participant) \(state) \(coordinate.latitude),\(coordinate.longitude) \(reason?.rawValue ?? "-")" }
}

func dragSteps(_ events: [Event]) -> [DragStep] {
    events.compactMap {
        if case let .drag(a, p, s, c, r) = $0 { DragStep(annotation: a, participant: p, state: s, coordinate: c, reason: r) } else { nil }
    }
}
