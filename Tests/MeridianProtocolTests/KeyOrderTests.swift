import MeridianCore
@testable import MeridianProtocol
import Testing

/// SPEC §7: every server message starts with `type`, and every nested object has its keys in
/// alphabetical order, so the same value is always the same bytes.
@Suite("The key order of server messages")
struct KeyOrderTests {
    static let here = Coordinate(latitude: 51.5, longitude: -0.12)
    static let camera = Camera(center: here, zoom: 12, pitch: 30, bearing: 45)
    static let red = Color(red: 255, green: 0, blue: 0)

    static var participant: Participant {
        var p = Participant(id: "p1", name: "Ada", color: red, role: .editor)
        p.camera = camera
        p.viewport = Viewport(width: 390, height: 844)
        p.following = .participant("p2")
        p.selection = "pin"
        p.mapLoad = MapLoad(state: .failed, message: "offline")
        p.location = UserLocation(coordinate: here, accuracy: 5, heading: 10, course: 20, tracking: .follow)
        return p
    }

    static let annotations: [Annotation] = [
        Annotation(
            id: "pin", shape: .point(Point(coordinate: here, image: "flag", centerOffset: Offset(dx: 1, dy: 2), draggable: true)),
            title: "T", subtitle: "S", zIndex: 2, kind: "k", metadata: ["z": .number(1), "a": .object(["y": .null, "b": .bool(true)])]),
        Annotation(id: "line", shape: .polyline(Polyline(coordinates: [here, here], alpha: 0.5, strokeColor: red, lineWidth: 2)), title: "L", kind: "k"),
        Annotation(id: "area", shape: .polygon(Polygon(coordinates: [here, here, here], holes: [[here, here, here]], strokeColor: red, fillColor: red)),
                   subtitle: "S", kind: "k"),
    ]

    static var settings: SessionSettings {
        var s = SessionSettings()
        s.styleURL = "mapbox://styles/x"
        s.constraints = CameraConstraints(
            bounds: Bounds(southWest: here, northEast: here), minZoom: 1, maxZoom: 18, maxPitch: 60, policy: .reject)
        return s
    }

    static var events: [Event] {
        let callout = Callout(
            title: "Hi", detail: "d", image: "i", accessory: .button(.infoLight), backgroundColor: red, titleColor: red,
            detailColor: red, anchor: .annotation("pin"))
        return [
            .participantJoined(participant), .participantLeft("p1", reason: "left"),
            .presence(joined: [participant, participant], left: [PresenceLeave(participant: "p2", reason: "disconnected")]),
            .camera(.own, participant: "p1", .begin(animated: true), viewport: Viewport(width: 1, height: 2)),
            .camera(.own, participant: "p1", .changing(camera), viewport: nil),
            .camera(.shared, participant: "p1", .end(camera, animated: false), viewport: nil),
            .cameraLease(holder: "p1", reason: "acquired"), .follow("p1", .shared),
            .annotationRemoved("pin"), .selection("p1", annotation: "pin", showsCallout: true),
            .calloutShown(callout, by: "p1"), .calloutHidden(reason: "hidden"),
            .calloutTapped(.accessory, by: "p1", anchor: .coordinate(here)),
            .drag(annotation: "pin", participant: "p1", state: .canceling, coordinate: here, reason: .leaseExpired),
            .mapLoad("p1", MapLoad(state: .failed, message: "m")),
            .location("p1", UserLocation(coordinate: here, accuracy: 1)), .location("p1", nil),
            .settings(settings),
        ] + annotations.flatMap { [Event.annotationAdded($0), .annotationUpdated($0)] }
    }

    @Test func everyEventStartsWithTypeAndSortsNestedKeys() throws {
        for event in Self.events {
            let bytes = ServerMessage.event(Emitted(event: event, seq: 3, conflation: .sharedCamera))
            try checkOrder(bytes)
        }
    }

    @Test func answersSnapshotsAndLiveSortNestedKeys() throws {
        var session = Session(id: "s", epoch: "e", settings: Self.settings)
        guard case .success(let (pid, _)) = session.join(JoinRequest(name: "Ada", role: .owner), at: .zero) else {
            Issue.record("join")
            return
        }
        for a in Self.annotations { _ = try session.apply(.addAnnotation(a), from: pid, at: .zero).get() }
        try checkOrder(ServerMessage.welcome(ref: .integer(1), session: session, participant: pid, resumedFrom: nil,
                                             annotations: ServerMessage.annotationsJSON(session)))
        try checkOrder(ServerMessage.live(session))
        try checkOrder(ServerMessage.ack(ref: .string("r"), seq: 1, camera: Self.camera))
        try checkOrder(ServerMessage.error(ref: .integer(2), code: .dragConflict, message: "held", field: "id",
                                           holder: Self.participant, retryAfterMs: 5))
    }

    /// The top level's first key is `type`; in every nested object the keys ascend.
    private func checkOrder(_ bytes: [UInt8]) throws {
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix(#"{"type":""#), "does not start with type: \(text)")
        guard case .success(let document) = JSONDocument.parseCopy(bytes) else {
            Issue.record("not JSON: \(text)")
            return
        }
        for index in document.nodes.indices.dropFirst() where document.nodes[index].kind == .object {
            var keys: [String] = []
            var children = document.children(of: index)
            while let key = children.next(), children.next() != nil { keys.append(document.string(at: key)) }
            #expect(keys == keys.sorted(), "keys out of order \(keys) in \(text)")
        }
    }
}
