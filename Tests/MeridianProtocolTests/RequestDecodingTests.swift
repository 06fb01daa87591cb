import MeridianCore
import MeridianProtocol
import Testing

@Suite("Decoding requests")
struct RequestDecodingTests {
    func decode(_ text: String) -> Result<ClientRequest, ProtocolError> {
        ClientRequest.decode(Array(text.utf8))
    }

    func command(_ text: String) throws -> Command {
        let request = try decode(text).get()
        guard case .command(let c) = request.body else { Issue.record("not a command: \(request)"); throw CancellationError() }
        return c
    }

    func failure(_ text: String) -> ProtocolError? {
        if case .failure(let e) = decode(text) { return e }
        Issue.record("decoded, expected a failure: \(text)")
        return nil
    }

    @Test func joinWithResume() throws {
        let r = try decode(##"{"type":"join","ref":"j1","session":"s","name":"Ada","role":"viewer","hidden":true,"color":"#ff0000","resume":{"epoch":"e","seq":7}}"##).get()
        #expect(r.ref == .string("j1"))
        #expect(r.body == .join(session: "s", JoinParameters(name: "Ada", role: .viewer, hidden: true, color: Color(red: 255, green: 0, blue: 0)), resume: ResumePoint(epoch: "e", seq: 7)))
    }

    @Test func undoRedoAndTheParticipantAJoinFollows() throws {
        #expect(try command(#"{"type":"undo","ref":1}"#) == .undo)
        #expect(try command(#"{"type":"redo","ref":2}"#) == .redo)
        #expect(failure(#"{"type":"undo","ref":3,"steps":2}"#)?.field == "steps")
        let r = try decode(#"{"type":"join","ref":"j","session":"s","name":"Ada","role":"editor","previousParticipant":"p4"}"#).get()
        #expect(r.body == .join(session: "s", JoinParameters(name: "Ada", role: .editor, previousParticipant: "p4"), resume: nil))
        #expect(failure(#"{"type":"join","ref":"j","session":"s","name":"Ada","role":"editor","previousParticipant":4}"#)?.field == "previousParticipant")
    }

    @Test func aJoinMayAskForHandoverWithABoolean() throws {
        let asked = try decode(#"{"type":"join","ref":"j","session":"s","name":"Ada","role":"editor","handover":true}"#).get()
        #expect(asked.body == .join(session: "s", JoinParameters(name: "Ada", role: .editor, handover: true), resume: nil))
        let silent = try decode(#"{"type":"join","ref":"j","session":"s","name":"Ada","role":"editor"}"#).get()
        #expect(silent.body == .join(session: "s", JoinParameters(name: "Ada", role: .editor, handover: false), resume: nil))
        #expect(failure(#"{"type":"join","ref":"j","session":"s","name":"Ada","role":"editor","handover":"yes"}"#)?.field == "handover")
        #expect(failure(#"{"type":"join","ref":"j","session":"s","name":"Ada","role":"editor","handover":1}"#)?.field == "handover")
    }

    @Test func movedNamesTheJoinsRefAndTheSession() {
        let text = String(decoding: ServerMessage.moved(ref: RequestRef(json: Array(#""a-join""#.utf8)), session: "harbour", reason: "the owner is gone"), as: UTF8.self)
        #expect(text == #"{"type":"moved","ref":"a-join","session":"harbour","reason":"the owner is gone"}"#)
    }

    @Test func pointDefaults() throws {
        let c = try command(#"{"type":"annotation.add","ref":1,"annotation":{"id":"a","type":"point","coordinate":{"latitude":1,"longitude":2}}}"#)
        #expect(c == .addAnnotation(Annotation(id: "a", shape: .point(Point(coordinate: Coordinate(latitude: 1, longitude: 2))))))
    }

    @Test func polygonWithHoles() throws {
        let ring = #"[{"latitude":0,"longitude":0},{"latitude":0,"longitude":1},{"latitude":1,"longitude":1}]"#
        let c = try command(##"{"type":"annotation.add","ref":1,"annotation":{"id":"g","type":"polygon","coordinates":\##(ring),"holes":[\##(ring)],"fillColor":"#00ff0080","alpha":0.5}}"##)
        guard case .addAnnotation(let a) = c, case .polygon(let g) = a.shape else { Issue.record("\(c)"); return }
        #expect(g.holes.count == 1)
        #expect(g.fillColor == Color(red: 0, green: 255, blue: 0, alpha: 128))
        #expect(g.strokeColor == nil)
        #expect(g.alpha == 0.5)
    }

    @Test func patchDistinguishesAbsentFromNull() throws {
        let c = try command(#"{"type":"annotation.update","ref":1,"id":"a","changes":{"title":null,"zIndex":4}}"#)
        guard case .updateAnnotation(_, let p, _) = c else { Issue.record("\(c)"); return }
        #expect(p.title == .some(nil))
        #expect(p.subtitle == nil)
        #expect(p.zIndex == 4)
    }

    @Test func cameraTargetsAndPhases() throws {
        #expect(try command(#"{"type":"camera.begin","ref":1,"animated":true}"#) == .camera(.own, .begin(animated: true), viewport: nil))
        let c = try command(#"{"type":"camera.changing","ref":1,"target":"shared","camera":{"center":{"latitude":1,"longitude":2},"zoom":3}}"#)
        #expect(c == .camera(.shared, .changing(Camera(center: Coordinate(latitude: 1, longitude: 2), zoom: 3)), viewport: nil))
    }

    @Test func dragAndCallout() throws {
        #expect(try command(#"{"type":"drag","ref":1,"id":"a","state":"dragging","coordinate":{"latitude":1,"longitude":2}}"#)
            == .drag(annotation: "a", state: .dragging, coordinate: Coordinate(latitude: 1, longitude: 2)))
        let c = try command(#"{"type":"callout.show","ref":1,"callout":{"title":"T","accessory":{"button":"infoLight"},"anchor":{"annotation":"a"}}}"#)
        #expect(c == .showCallout(Callout(title: "T", accessory: .button(.infoLight), anchor: .annotation("a"))))
    }

    @Test func errorsNameTheNestedField() {
        let e = failure(#"{"type":"annotation.add","ref":9,"annotation":{"id":"l","type":"polyline","coordinates":[{"latitude":0,"longitude":0},{"latitude":"x","longitude":0}]}}"#)
        #expect(e?.field == "annotation.coordinates[1].latitude")
        #expect(e?.code == .invalidField)
        #expect(e?.ref == .integer(9))
    }

    @Test func unknownFieldsAreRefused() {
        #expect(failure(#"{"type":"deselect","ref":1,"extra":true}"#)?.field == "extra")
        #expect(failure(#"{"type":"select","ref":1,"id":"a","annotation":{"colour":1}}"#)?.field == "annotation")
    }

    @Test func malformedInput() {
        #expect(failure("{")?.code == .invalidMessage)
        #expect(failure("[1,2]")?.code == .invalidMessage)
        #expect(failure(#"{"type":"ping","ref":NaN}"#)?.code == .invalidMessage)
        #expect(failure(#"{"type":"ping"}"#)?.field == "ref")
        #expect(failure(#"{"type":"ping","ref":1.5}"#)?.field == "ref")
        #expect(failure(#"{"type":"warp","ref":1}"#)?.code == .unknownType)
        #expect(failure(#"{"type":"drag","ref":1,"id":"a","state":"flying"}"#)?.field == "state")
        #expect(failure(#"{"type":"annotation.add","ref":1,"annotation":{"id":"a","type":"point","coordinate":{"latitude":1e999,"longitude":0}}}"#) != nil)
        #expect(failure(#"{"type":"annotation.update","ref":1,"id":"a","changes":{"type":"polygon"}}"#)?.field == "changes.type")
    }

    @Test func deeplyNestedJSONIsRefusedWithoutCrashing() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(failure(deep)?.code == .invalidMessage)
    }
}
