import MeridianCore
import MeridianProtocol
import Testing

@Suite("Dashboard messages: overview.watch, overview, drag.refused")
struct DashboardMessageCodecTests {
    @Test func overviewWatchDecodes() throws {
        let request = try ClientRequest.decode(Array(#"{"type":"overview.watch","ref":"o1"}"#.utf8)).get()
        #expect(request.body == .overviewWatch(token: nil))
        #expect(request.typeName == "overview.watch")
    }

    @Test func overviewWatchRefusesUnknownFields() {
        guard case .failure(let error) = ClientRequest.decode(Array(#"{"type":"overview.watch","ref":2,"session":"s"}"#.utf8)) else {
            Issue.record("decoded an overview.watch with a session field")
            return
        }
        #expect(error.code == .invalidField)
        #expect(error.field == "session")
        #expect(error.ref == .integer(2))
    }

    @Test func overviewEncodesEveryCountAndRoundsRates() {
        let entry = OverviewEntry(session: "s", seq: 9, participants: 2, dashboards: 1, annotations: 40, drags: 1,
                                  messagesPerSecond: 12.345, deliveriesPerSecond: 37.06)
        let text = String(decoding: ServerMessage.overview([entry], connections: 3), as: UTF8.self)
        #expect(text == #"{"type":"overview","connections":3,"sessions":[{"annotations":40,"dashboards":1,"deliveriesPerSecond":37.1,"drags":1,"lastActivity":null,"messagesPerSecond":12.3,"names":[],"participants":2,"seq":9,"session":"s"}]}"#)
    }

    @Test func overviewCarriesNamesAndLastActivity() {
        let names = (1...25).map { "N\($0)" }
        let entry = OverviewEntry(session: "s", seq: 1, participants: 25, dashboards: 0, annotations: 0, drags: 0,
                                  messagesPerSecond: 0, deliveriesPerSecond: 0, names: names, lastActivityMs: 1_795_000_000_123)
        let text = String(decoding: ServerMessage.overview([entry], connections: 25), as: UTF8.self)
        #expect(text.contains(#""lastActivity":1795000000123,"#))
        #expect(text.contains(#""names":["N1","N2","#) && text.contains(#""N20"]"#) && !text.contains("N21"))
    }

    @Test func dragRefusedNamesTheRefusedAndTheHolder() {
        let text = String(decoding: ServerMessage.dragRefused(seq: 4, annotation: "pin", participant: "p2", holder: "p1"), as: UTF8.self)
        #expect(text == #"{"type":"drag.refused","seq":4,"transient":true,"id":"pin","participant":"p2","holder":"p1"}"#)
        let unknown = String(decoding: ServerMessage.dragRefused(seq: 4, annotation: "pin", participant: "p2", holder: nil), as: UTF8.self)
        #expect(unknown.hasSuffix(#""holder":null}"#))
    }
}
