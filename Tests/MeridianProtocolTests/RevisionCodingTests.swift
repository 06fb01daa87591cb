import MeridianCore
import MeridianProtocol
import Testing

@Suite("Revisions and ifRevision on the wire")
struct RevisionCodingTests {
    func decode(_ text: String) -> Result<ClientRequest, ProtocolError> {
        ClientRequest.decode(Array(text.utf8))
    }

    func command(_ text: String) throws -> Command {
        guard case .command(let c) = try decode(text).get().body else { throw CancellationError() }
        return c
    }

    func refusal(_ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> ProtocolError? {
        if case .failure(let e) = decode(text) { return e }
        Issue.record("decoded, expected a failure: \(text)", sourceLocation: sourceLocation)
        return nil
    }

    func object(_ bytes: [UInt8]) throws -> [String: JSONValue] {
        guard case .object(let o) = try #require(JSONValue.parse(bytes)) else { throw CancellationError() }
        return o
    }

    @Test func conditionalRequestsCarryIfRevision() throws {
        #expect(try command(#"{"type":"annotation.update","ref":1,"id":"a","changes":{"zIndex":1},"ifRevision":7}"#)
            == .updateAnnotation(id: "a", { var p = AnnotationPatch(); p.zIndex = 1; return p }(), ifRevision: 7))
        #expect(try command(#"{"type":"annotation.remove","ref":1,"id":"a","ifRevision":9007199254740991}"#)
            == .removeAnnotation(id: "a", ifRevision: 9_007_199_254_740_991))
        #expect(try command(#"{"type":"drag","ref":1,"id":"a","state":"starting","ifRevision":3}"#)
            == .drag(annotation: "a", state: .starting, coordinate: nil, ifRevision: 3))
        // Absent or null: no condition.
        #expect(try command(#"{"type":"annotation.remove","ref":1,"id":"a","ifRevision":null}"#) == .removeAnnotation(id: "a"))
        #expect(try command(#"{"type":"annotation.remove","ref":1,"id":"a"}"#) == .removeAnnotation(id: "a", ifRevision: nil))
    }

    @Test(arguments: [#""7""#, "0", "-1", "1.5", "9007199254740992", "1e400", "true", "{}"])
    func ifRevisionIsAnIntegerInRange(_ value: String) {
        for text in [#"{"type":"annotation.update","ref":"u","id":"a","changes":{},"ifRevision":\#(value)}"#,
                     #"{"type":"annotation.remove","ref":"u","id":"a","ifRevision":\#(value)}"#,
                     #"{"type":"drag","ref":"u","id":"a","state":"starting","ifRevision":\#(value)}"#] {
            let e = refusal(text)
            #expect(e?.code == .invalidField, "\(text)")
            #expect(e?.field == "ifRevision", "\(text)")
            #expect(e?.message.contains("ifRevision") == true, "\(e?.message ?? "")")
            #expect(e?.ref == .string("u"))
        }
    }

    @Test func onlyAStartingDragTakesIfRevision() {
        for state in ["dragging", "ending", "canceling"] {
            let e = refusal(#"{"type":"drag","ref":1,"id":"a","state":"\#(state)","coordinate":{"latitude":1,"longitude":2},"ifRevision":3}"#)
            #expect(e?.field == "ifRevision")
            #expect(e?.message.contains("starting") == true, "\(e?.message ?? "")")
        }
    }

    @Test func clientsNeverSetRevision() {
        let add = refusal(#"{"type":"annotation.add","ref":1,"annotation":{"id":"a","type":"point","coordinate":{"latitude":1,"longitude":2},"revision":4}}"#)
        #expect(add?.code == .invalidField)
        #expect(add?.field == "annotation.revision")
        #expect(add?.message.contains("set by the server") == true, "\(add?.message ?? "")")
        let update = refusal(#"{"type":"annotation.update","ref":1,"id":"a","changes":{"revision":4}}"#)
        #expect(update?.field == "changes.revision")
    }

    @Test func annotationsAndEndingsCarryTheRevision() throws {
        let a = Annotation(id: "a", shape: .point(Point(coordinate: Coordinate(latitude: 1, longitude: 2))), revision: 12)
        let added = try object(ServerMessage.event(Emitted(event: .annotationAdded(a), seq: 12)))
        guard case .object(let fields)? = added["annotation"] else { Issue.record("no annotation"); return }
        #expect(fields["revision"] == .number(12))

        func drag(_ state: DragState, seq: UInt64) throws -> [String: JSONValue] {
            try object(ServerMessage.event(Emitted(event: .drag(annotation: "a", participant: "p1", state: state, coordinate: a.point!.coordinate, reason: nil), seq: seq)))
        }
        #expect(try drag(.ending, seq: 20)["revision"] == .number(20))
        let ending = String(decoding: ServerMessage.event(Emitted(event: .drag(annotation: "a", participant: "p1", state: .ending, coordinate: a.point!.coordinate, reason: nil), seq: 20)), as: UTF8.self)
        #expect(ending.hasSuffix(#""coordinate":{"latitude":1,"longitude":2},"revision":20}"#), "\(ending)")
        for state in [DragState.starting, .dragging, .canceling, .none] {
            #expect(try drag(state, seq: 21)["revision"] == nil, "\(state)")
        }
    }

    @Test func aConflictCarriesTheRevisionAndTheAnnotation() throws {
        let a = Annotation(id: "a", shape: .point(Point(coordinate: Coordinate(latitude: 1, longitude: 2))), title: "Theirs", revision: 31)
        let text = String(decoding: ServerMessage.error(ref: .integer(5), code: .revisionConflict, message: "stale", field: "ifRevision", annotation: a), as: UTF8.self)
        #expect(text.hasPrefix(#"{"type":"error","ref":5,"code":"revision_conflict","message":"stale","field":"ifRevision","revision":31,"annotation":{"#), "\(text)")
        let o = try object(Array(text.utf8))
        guard case .object(let fields)? = o["annotation"] else { Issue.record("no annotation"); return }
        #expect(fields["title"] == .string("Theirs"))
        #expect(fields["revision"] == .number(31))
    }

    @Test func storedRevisionsComeBackAndOlderRecordsGetTheFallback() throws {
        let a = Annotation(id: "l", shape: .polyline(Polyline(coordinates: [Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 1, longitude: 1)])), revision: 44)
        let stored = StoredForm.encode(a)
        #expect(try StoredForm.annotation(stored, revisionIfAbsent: 99) == a)
        // A body written before annotations had revisions.
        guard case .object(var fields) = try #require(JSONValue.parse(stored)) else { throw CancellationError() }
        fields["revision"] = nil
        var older = a
        older.revision = 99
        #expect(try StoredForm.annotation(JSONValue.object(fields).encoded, revisionIfAbsent: 99) == older)
        older.revision = 1
        #expect(try StoredForm.annotation(JSONValue.object(fields).encoded, revisionIfAbsent: 0) == older)
    }
}
