import Testing
@testable import MeridianCore

/// A world where every kind of shared change is possible, for role checks.
func stage() throws -> (World, owner: ParticipantID, editor: ParticipantID, viewer: ParticipantID) {
    var (w, o, e, v) = try trio()
    try w.add(point("a", title: "A", draggable: true, canShowCallout: true), by: o)
    try w.ok(.showCallout(Callout(title: "A", accessory: .button(.infoDark), anchor: .annotation("a"))), by: o)
    return (w, o, e, v)
}

let sharedChanges: [Command] = [
    .addAnnotation(point("b")),
    .updateAnnotation(id: "a", patch { $0.title = "B" }),
    .removeAnnotation(id: "a"),
    .drag(annotation: "a", state: .starting, coordinate: nil),
    .showCallout(Callout(title: "x", anchor: .coordinate(C(0, 0)))),
    .hideCallout,
    .configure(settingsPatch { $0.styleURL = "mapbox://styles/x" }),
    .acquireCameraLease(force: false),
    .acquireCameraLease(force: true),
    .camera(.shared, .begin(animated: true), viewport: nil),
]

let presenceCommands: [Command] = [
    .select(annotation: "a"),
    .deselect,
    .camera(.own, .begin(animated: true), viewport: Viewport(width: 320, height: 480)),
    .camera(.own, .changing(cam(1, 1)), viewport: nil),
    .camera(.own, .end(cam(1, 2), animated: false), viewport: nil),
    .location(UserLocation(coordinate: C(1, 1), accuracy: 5)),
    .location(nil),
    .mapLoad(MapLoad(state: .loaded)),
    .follow(.participant("p1")),
    .follow(.shared),
    .tapCallout(.body),
    .tapCallout(.accessory),
]

@Suite struct RoleTests {
    @Test(arguments: sharedChanges)
    func viewerMayNotChangeSharedState(command: Command) throws {
        var (w, _, _, v) = try stage()
        try w.refuse(command, by: v, .forbidden)
    }

    @Test func aViewerIsForbiddenTheSharedCameraWhateverTheLease() throws {
        var (w, _, e, v) = try stage()
        let shared: [Command] = [
            .camera(.shared, .begin(animated: false), viewport: nil), .camera(.shared, .changing(cam(1, 1)), viewport: nil),
            .camera(.shared, .end(cam(1, 1), animated: false), viewport: nil),
            .acquireCameraLease(force: false), .acquireCameraLease(force: true), .releaseCameraLease,
        ]
        // No holder, then an editor holding the lease: the role decides before the lease does.
        for command in shared { try w.refuse(command, by: v, .forbidden) }
        try w.ok(.acquireCameraLease(force: false), by: e)
        for command in shared {
            let error = try w.refuse(command, by: v, .forbidden)
            #expect(error.holder == nil)
        }
        #expect(w.session.cameraLeaseHolder == e)
    }

    @Test(arguments: presenceCommands)
    func viewerHasPresence(command: Command) throws {
        var (w, _, _, v) = try stage()
        try w.ok(command, by: v)
    }

    @Test(arguments: sharedChanges)
    func editorMayChangeSharedStateButNotSettings(command: Command) throws {
        var (w, o, e, _) = try stage()
        switch command {
        case .configure:
            try w.refuse(command, by: e, .forbidden)
            try w.ok(command, by: o)
        case .camera(.shared, _, _):
            try w.ok(.acquireCameraLease(force: false), by: e)
            try w.ok(command, by: e)
        default:
            try w.ok(command, by: e)
        }
    }

    @Test func ownerConfiguresValidSettingsOnly() throws {
        var (w, o, _, _) = try trio()
        let c = CameraConstraints(bounds: Bounds(southWest: C(0, 170), northEast: C(10, -170)), minZoom: 2, maxZoom: 8, maxPitch: 30, policy: .reject)
        let events = try w.events(.configure(settingsPatch { $0.constraints = c; $0.leaseTimeout = .seconds(3); $0.styleURL = "s" }), by: o)
        let expected = SessionSettings(styleURL: "s", leaseTimeout: .seconds(3), constraints: c)
        #expect(events == [.settings(expected)])
        #expect(w.session.settings == expected)
        try w.refuse(.configure(settingsPatch { $0.leaseTimeout = .milliseconds(50) }), by: o, .invalidField, field: "settings.leaseTimeoutMs")
        try w.refuse(.configure(settingsPatch { $0.leaseTimeout = .seconds(3_601) }), by: o, .invalidField, field: "settings.leaseTimeoutMs")
        try w.refuse(.configure(settingsPatch { $0.constraints = CameraConstraints(minZoom: 9, maxZoom: 3) }), by: o, .invalidField, field: "settings.constraints.minZoom")
        try w.refuse(.configure(settingsPatch { $0.constraints = CameraConstraints(maxPitch: 90) }), by: o, .invalidField, field: "settings.constraints.maxPitch")
        try w.refuse(.configure(settingsPatch { $0.constraints = CameraConstraints(bounds: Bounds(southWest: C(10, 0), northEast: C(0, 1))) }), by: o, .invalidField, field: "settings.constraints.bounds")
        try w.refuse(.configure(settingsPatch { $0.constraints = CameraConstraints(bounds: Bounds(southWest: C(0, 0), northEast: C(10, 200))) }), by: o, .invalidField, field: "settings.constraints.bounds.northEast.longitude")
    }

    @Test func hiddenParticipantIsNotAnnounced() throws {
        var w = World()
        let o = try w.join("Olive", .owner)
        let seq = w.session.seq
        guard case .success(let (h, events)) = w.session.join(JoinRequest(name: "Dashboard", role: .viewer, hidden: true), at: w.now) else {
            Issue.record("hidden join refused"); return
        }
        #expect(events.isEmpty)
        #expect(w.session.seq == seq)
        #expect(w.session.visibleParticipants.map(\.id) == [o])
        #expect(w.participant(h)?.hidden == true)
        #expect(w.session.leave(h, reason: "closed", at: w.now).isEmpty)
        #expect(w.session.seq == seq)
        #expect(w.participant(h) == nil)
    }

    @Test(arguments: sharedChanges + presenceCommands)
    func hiddenParticipantMayDoNothing(command: Command) throws {
        var (w, _, _, _) = try stage()
        let h = try w.join("Dashboard", .owner, hidden: true)
        try w.refuse(command, by: h, .forbidden)
    }

    @Test func joinAnnouncesVisibleParticipantsInOrder() throws {
        var w = World()
        let outcome = w.session.join(JoinRequest(name: "Ann", role: .editor, color: Color(hex: "#123456")), at: .zero)
        let (a, events) = try outcome.get()
        let ann = Participant(id: a, name: "Ann", color: Color(hex: "#123456")!, role: .editor)
        #expect(events.map(\.event) == [.participantJoined(ann)])
        let b = try w.join("Bob", .viewer)
        _ = try w.join("Hid", .viewer, hidden: true)
        let c = try w.join("Cy", .owner)
        #expect(w.session.visibleParticipants.map(\.id) == [a, b, c])
        #expect([a, b, c] == ["p1", "p2", "p4"])
    }

    @Test func joinValidatesTheName() {
        var s = Session(id: "s", epoch: "e")
        #expect(throws: SessionError.self) { try s.join(JoinRequest(name: "", role: .editor), at: .zero).get() }
        #expect(throws: SessionError.self) { try s.join(JoinRequest(name: String(repeating: "n", count: 65), role: .editor), at: .zero).get() }
        #expect(s.participants.isEmpty)
        #expect(s.seq == 0)
    }

    @Test func participantsChosenByTokensAreListedAndDeselectedInJoinOrder() throws {
        var w = World()
        let ids = ["zed", "amy", "p1", "bob"]
        for id in ids {
            _ = try w.session.join(JoinRequest(name: id, role: .editor, participant: id), at: .zero).get()
        }
        #expect(w.session.visibleParticipants.map(\.id) == ids)
        try w.add(point("a"), by: "zed")
        for id in ids.reversed() { try w.ok(.select(annotation: "a"), by: id) }
        let deselected = try w.events(.removeAnnotation(id: "a"), by: "zed").compactMap { event -> ParticipantID? in
            if case .selection(let pid, nil, _) = event { pid } else { nil }
        }
        #expect(deselected == ids)
    }

    @Test func participantCountIsLimited() throws {
        var w = World(limits: { $0.maxParticipants = 2 })
        let a = try w.join("A")
        try w.join("B")
        let seq = w.session.seq
        #expect(throws: SessionError.self) { try w.session.join(JoinRequest(name: "C", role: .viewer), at: .zero).get() }
        #expect(w.session.seq == seq)
        _ = w.session.leave(a, reason: "bye", at: .zero)
        try w.join("C")
    }

    @Test func hiddenParticipantsCountTowardTheLimit() throws {
        var w = World(limits: { $0.maxParticipants = 2 })
        try w.join("Owner", .owner)
        let dashboard = try w.join("Dashboard", .viewer, hidden: true)
        for hidden in [false, true] {
            let refused = w.session.join(JoinRequest(name: "Late", role: .viewer, hidden: hidden), at: .zero)
            #expect(throws: SessionError.self) { try refused.get() }
            if case .failure(let error) = refused { #expect(error.code == .limitExceeded) }
        }
        _ = w.session.leave(dashboard, reason: "left", at: .zero)
        try w.join("Late", .viewer)
    }

    @Test func unknownParticipantIsNotFound() throws {
        var (w, _, _, _) = try trio()
        try w.refuse(.deselect, by: "p42", .notFound)
    }
}

extension Command: CustomTestStringConvertible {
    public var testDescription: String { name }
}
