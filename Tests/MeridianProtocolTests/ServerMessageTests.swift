import MeridianCore
import MeridianProtocol
import Testing

@Suite("Encoding server messages")
struct ServerMessageTests {
    func parse(_ bytes: [UInt8]) throws -> [String: JSONValue] {
        guard case .object(let o) = try #require(JSONValue.parse(bytes)) else { throw CancellationError() }
        return o
    }

    @Test func typeComesFirstAndTransientIsMarked() throws {
        let e = Emitted(event: .location("p1", nil), seq: 4, conflation: .location("p1"))
        let bytes = ServerMessage.event(e)
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix(#"{"type":"location","seq":4,"transient":true"#))
        #expect(try parse(bytes)["location"] == .null)
    }

    @Test func annotationCarriesEveryDefault() throws {
        let a = Annotation(id: "a", shape: .polyline(Polyline(coordinates: [Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 1, longitude: 1)])))
        let o = try parse(ServerMessage.event(Emitted(event: .annotationAdded(a), seq: 1)))
        guard case .object(let fields) = o["annotation"] else { Issue.record("no annotation"); return }
        #expect(fields["lineWidth"] == .number(3))
        #expect(fields["alpha"] == .number(1))
        #expect(fields["enabled"] == .bool(true))
        #expect(fields["strokeColor"] == nil)
    }

    @Test func roundTripThroughTheDecoderKeepsTheAnnotation() throws {
        let a = Annotation(
            id: "p", shape: .point(Point(coordinate: Coordinate(latitude: 1.25, longitude: -3.5), image: "pin", calloutOffset: Offset(dx: 0, dy: -12), draggable: true, canShowCallout: true)),
            title: "T", zIndex: 3, kind: "marker", metadata: ["k": .array([.number(1), .string("x")])])
        let encoded = ServerMessage.event(Emitted(event: .annotationAdded(a), seq: 1))
        // A client sends back everything but the revision, which only the server sets.
        guard case .object(var annotation)? = try parse(encoded)["annotation"] else { Issue.record("no annotation"); return }
        #expect(annotation.removeValue(forKey: "revision") == .number(0))
        let request = JSONValue.object(["type": .string("annotation.add"), "ref": .number(1), "annotation": .object(annotation)])
        let decoded = try ClientRequest.decode(request.encoded).get()
        #expect(decoded.body == .command(.addAnnotation(a)))
    }

    @Test func errorNamesRefCodeFieldAndHolder() throws {
        let holder = Participant(id: "p2", name: "Bo", color: .defaultTint, role: .editor)
        let o = try parse(ServerMessage.error(ref: .string("r"), code: .dragConflict, message: "held", holder: holder))
        #expect(o["ref"] == .string("r"))
        #expect(o["code"] == .string("drag_conflict"))
        #expect(o["holder"] == .object(["id": .string("p2"), "name": .string("Bo")]))
    }

    @Test func stringsAreEscaped() throws {
        let tricky = "quote\" backslash\\ newline\n tab\t nul\u{0} é ✓"
        let o = try parse(ServerMessage.event(Emitted(event: .calloutHidden(reason: tricky), seq: 1)))
        #expect(o["reason"] == .string(tricky))
    }

    @Test func welcomeSnapshotFromCachedAnnotationsEqualsTheSnapshot() throws {
        var session = Session(id: "s", epoch: "e")
        guard case .success(let (pid, _)) = session.join(JoinRequest(name: "Ada", role: .owner), at: .zero) else { Issue.record("join"); return }
        for i in 0..<3 {
            let a = Annotation(id: "a\(i)", shape: .point(Point(coordinate: Coordinate(latitude: Double(i), longitude: 1))), title: "T\(i)", zIndex: 3 - i)
            _ = try session.apply(.addAnnotation(a), from: pid, at: .zero).get()
        }
        let bytes = ServerMessage.welcome(ref: .integer(1), session: session, participant: pid, resumedFrom: nil,
                                          annotations: ServerMessage.annotationsJSON(session))
        let welcome = try parse(bytes)
        #expect(welcome["snapshot"] == ServerMessage.snapshot(session))
        #expect(welcome["participant"] == .string(pid))
        let resumed = try parse(ServerMessage.welcome(ref: .integer(2), session: session, participant: pid, resumedFrom: 1, annotations: []))
        #expect(resumed["snapshot"] == nil)
        #expect(resumed["resumedFrom"] == .number(1))
    }
}
