import MeridianCore
import MeridianProtocol
import Testing

/// `interest.filter` (SPEC §4.7): read as a string, compiled when decoded, refused as
/// `invalid_field` naming `filter` (`interest.filter` in a join) with the problem's position;
/// echoed in the view the server writes.
@Suite("Interest filters on the wire")
struct FilterDecodingTests {
    func decode(_ text: String) -> Result<ClientRequest, ProtocolError> {
        ClientRequest.decode(Array(text.utf8))
    }

    @Test func interestRequestCompilesItsFilter() throws {
        let r = try decode(#"{"type":"interest","ref":1,"mode":"everything","filter":"kind = 'truck' and metadata.load between 1 and 10"}"#).get()
        let filter = try AnnotationFilter("kind = 'truck' and metadata.load between 1 and 10")
        #expect(r.body == .interest(Interest(mode: .everything, filter: filter)))
    }

    @Test func joinInterestCompilesItsFilter() throws {
        let r = try decode(#"{"type":"join","ref":1,"session":"s","name":"A","role":"viewer","interest":{"mode":"viewport","margin":0,"filter":"type != 'point'"}}"#).get()
        guard case .join(_, let parameters, _) = r.body else { Issue.record("\(r)"); return }
        #expect(parameters.interest == Interest(mode: .viewport, margin: 0, filter: try AnnotationFilter("type != 'point'")))
    }

    @Test func aNullOrAbsentFilterIsNone() throws {
        for text in [#"{"type":"interest","ref":1,"mode":"everything"}"#, #"{"type":"interest","ref":1,"mode":"everything","filter":null}"#] {
            #expect(try decode(text).get().body == .interest(Interest(mode: .everything)))
        }
    }

    @Test func badFiltersAreRefusedNamingTheFieldAndPosition() {
        let cases: [(String, String, String)] = [
            (#"{"type":"interest","ref":1,"mode":"everything","filter":"kind in ("}"#, "filter",
             #"filter: at 10: expected a value after "kind in (", got the end"#),
            (#"{"type":"join","ref":1,"session":"s","name":"A","role":"viewer","interest":{"mode":"everything","filter":"zIndex = 'x'"}}"#,
             "interest.filter", #"interest.filter: at 10: zIndex is a number: 'x' cannot match it"#),
            (#"{"type":"interest","ref":1,"mode":"everything","filter":3}"#, "filter", "filter: must be a string"),
        ]
        for (text, field, message) in cases {
            guard case .failure(let e) = decode(text) else { Issue.record("decoded: \(text)"); continue }
            #expect(e.code == .invalidField)
            #expect(e.field == field)
            #expect(e.message == message)
        }
    }

    @Test func theViewEchoesTheFilter() throws {
        var view = InterestView(area: .world, zoom: 0, clusters: false)
        let plain = String(decoding: ServerMessage.clusters(seq: 1, view: view, []), as: UTF8.self)
        #expect(!plain.contains("filter"))
        view.filter = try AnnotationFilter("title = 'a \"b\"'")
        let text = String(decoding: ServerMessage.clusters(seq: 1, view: view, []), as: UTF8.self)
        #expect(text.contains(#""clusters":false,"filter":"title = 'a \"b\"'","zoom":0"#), "\(text)")
    }
}
