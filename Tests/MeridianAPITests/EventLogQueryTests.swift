import MeridianAPI
import MeridianHTTP
import Testing

/// The event log's query: every malformed query is a 400 naming the parameter, never a trap.
struct EventLogQueryTests {
    func refusal(_ query: String) -> APIRefusal? {
        if case .failure(let r) = EventLogQuery.parse(query) { return r }
        return nil
    }

    @Test func defaultsAndValues() throws {
        #expect(try EventLogQuery.parse("").get() == EventLogQuery(after: 0, limit: 100))
        #expect(try EventLogQuery.parse("after=7&limit=1000").get() == EventLogQuery(after: 7, limit: 1000))
        #expect(try EventLogQuery.parse("limit=1&after=0").get() == EventLogQuery(after: 0, limit: 1))
        #expect(try EventLogQuery.parse("after=9223372036854775807").get().after == .max)
        #expect(try EventLogQuery.parse("after=007").get().after == 7)
        // Empty pieces are nothing.
        #expect(try EventLogQuery.parse("&&after=3&").get().after == 3)
        #expect(try EventLogQuery.parse("order=newest&before=40&since=1000&until=2000&limit=5").get()
                == EventLogQuery(before: 40, since: 1_000, until: 2_000, newestFirst: true, limit: 5))
        #expect(try EventLogQuery.parse("order=oldest").get() == EventLogQuery())
        let every = EventLogQuery(after: 3, before: 40, since: 1_000, until: 2_000, newestFirst: true, limit: 5)
        #expect(try EventLogQuery.parse(every.queryString).get() == every)
        #expect(EventLogQuery().queryString == "after=0&limit=100")
    }

    /// `?=` made the event log's page (then `Hub.eventLogResponse`) index an empty array and the process die.
    @Test(arguments: ["=", "==", "=1", "&=", "=&=", "after=1&="])
    func aParameterWithoutANameIsRefused(_ query: String) {
        let r = refusal(query)
        #expect(r?.status == 400)
        #expect(r?.code == "invalid_field")
        #expect(r?.message.contains("has no name") == true)
    }

    @Test(arguments: [
        ("after", "after"), ("after=", "after"), ("limit", "limit"), ("limit=", "limit"),
        ("after=-1", "after"), ("after=+1", "after"), ("after=1.0", "after"), ("after=1e3", "after"), ("after= 1", "after"),
        ("after=9223372036854775808", "after"), ("after=99999999999999999999999999999999", "after"),
        ("limit=0", "limit"), ("limit=1001", "limit"), ("limit=18446744073709551617", "limit"), ("limit=%31", "limit"),
        ("after=1&after=2", "after"), ("limit=5&limit=5", "limit"),
        ("before", "before"), ("before=-1", "before"), ("since=1.5", "since"), ("until=", "until"), ("until=9223372036854775808", "until"),
        ("order", "order"), ("order=Newest", "order"), ("order=latest", "order"), ("order=newest&order=newest", "order"),
        ("x=1", "x"), ("After=1", "After"), ("after%3D1", "after%3D1"), ("access_token=abc", "access_token"),
    ])
    func malformedParametersAreRefusedByName(_ query: String, _ field: String) {
        let r = refusal(query)
        #expect(r?.status == 400, "\(query)")
        #expect(r?.code == "invalid_field", "\(query)")
        #expect(r?.field == field, "\(query)")
        #expect(r?.message.isEmpty == false)
    }

    @Test func longValuesAreQuotedShort() {
        let r = refusal("after=" + String(repeating: "9", count: 10_000))
        #expect(r != nil)
        #expect((r?.message.count ?? .max) < 200)
    }

    @Test func naturalNumbers() {
        #expect(QueryString.natural("0") == 0)
        #expect(QueryString.natural("") == nil)
        #expect(QueryString.natural("18446744073709551615") == nil)
        #expect(QueryString.natural("10", max: 9) == nil)
        #expect(QueryString.natural("٣") == nil, "only ASCII digits")
    }

    @Test func parametersSplitAtAmpersandAndTheFirstEquals() {
        let p = QueryString.parameters("a=1&b&=c&d=e=f&&")
        #expect(p.map(\.name) == ["a", "b", "", "d"])
        #expect(p.map(\.value) == ["1", nil, "c", "e=f"])
    }
}
