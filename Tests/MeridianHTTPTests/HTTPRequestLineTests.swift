import MeridianHTTP
import Testing

/// The request lines of methods lws does not parse, and Content-Length values.
struct HTTPRequestLineTests {
    func parse(_ text: String) -> HTTPRequestLine.Parsed { HTTPRequestLine.parse(Array(text.utf8)) }

    @Test func aRequestLine() {
        #expect(parse("TRACE /api/sessions HTTP/1.1\r\nHost: x\r\n\r\n") == .line(HTTPRequestLine(method: "TRACE", path: "/api/sessions", query: "")))
        #expect(parse("QUERY /api/sessions/s/events?after=1&x HTTP/1.0\n") == .line(HTTPRequestLine(method: "QUERY", path: "/api/sessions/s/events", query: "after=1&x")))
        #expect(parse("CONNECT /? HTTP/1.1\r\n") == .line(HTTPRequestLine(method: "CONNECT", path: "/", query: "")))
    }

    @Test(arguments: ["", "TRACE", "TRACE /api/sessions HTTP/1.1", "T", "TRACE /" + String(repeating: "a", count: HTTPRequestLine.maxLength - 8)])
    func anUnfinishedLineWaits(_ text: String) {
        #expect(parse(text) == .incomplete)
    }

    @Test(arguments: [
        "\r\n", "TRACE\r\n", "TRACE /x\r\n", "TRACE  /x HTTP/1.1\r\n", "TRACE /x HTTP/1.1 extra\r\n", "TRACE /x FTP/1\r\n",
        "TRA(E /x HTTP/1.1\r\n", "TRACE /a\u{7f}b HTTP/1.1\r\n", "TRACE /a\tb HTTP/1.1\r\n", String(repeating: "M", count: 33) + " / HTTP/1.1\r\n",
        "\u{16}\u{3}\u{1}\u{2}\0\u{1}\0\u{1}\n",
    ])
    func whatIsNoRequestLineIsInvalid(_ text: String) {
        #expect(parse(text) == .invalid)
    }

    /// Known at once, before any line end: no client waits on these.
    @Test(arguments: ["\u{16}\u{3}\u{1}", " ", " /x", "GE\tT", String(repeating: "M", count: 33), "TRACE\r"])
    func whatCannotStartARequestLineIsInvalidAtOnce(_ text: String) {
        #expect(parse(text) == .invalid)
    }

    @Test func anEndlessLineIsInvalid() {
        #expect(parse(String(repeating: "A", count: HTTPRequestLine.maxLength)) == .invalid)
        #expect(parse("GET /" + String(repeating: "a", count: HTTPRequestLine.maxLength) + " HTTP/1.1\r\n") == .invalid)
    }

    @Test func contentLength() {
        #expect(ContentLength.parse("0") == 0)
        #expect(ContentLength.parse("1048576") == 1_048_576)
        #expect(ContentLength.parse("9223372036854775807") == .max)
        #expect(ContentLength.parse("9223372036854775808") == nil)
        #expect(ContentLength.parse("99999999999999999999999") == nil)
        for bad in ["", "-1", "+1", " 1", "1 ", "1,1", "0x10", "1e3"] { #expect(ContentLength.parse(bad) == nil, "\(bad)") }
    }

    /// Where a `%00` stands, which libwebsockets would drop the request for (the transport answers it).
    @Test(arguments: [
        ("GET /api/sessions/x/events?limit=%00 HTTP/1.1\r\n", HTTPRequestLine.NULPlace.parameter("limit")),
        ("GET /api/sessions?after=1&x=a%00b HTTP/1.1\r\n", .parameter("x")),
        ("GET /api/sessions?my+key%21=%00 HTTP/1.1\r\n", .parameter("my key!")),
        ("GET /api/sessions?%00=1 HTTP/1.1\r\n", .parameter("\u{0}")),
        ("GET /api/sessions/a%00b?limit=%00 HTTP/1.1\r\n", .path),
    ])
    func aNULIsFoundWhereItStands(_ text: String, _ place: HTTPRequestLine.NULPlace) throws {
        guard case .line(let line) = parse(text) else { throw ParseFailure() }
        #expect(line.encodedNUL == place)
    }

    @Test(arguments: ["GET /api/sessions?limit=%01 HTTP/1.1\r\n", "GET /a%2500?x=%0 HTTP/1.1\r\n", "GET /api/sessions HTTP/1.1\r\n"])
    func noNULNoPlace(_ text: String) throws {
        guard case .line(let line) = parse(text) else { throw ParseFailure() }
        #expect(line.encodedNUL == nil)
    }

    @Test func percentDecoding() {
        #expect(HTTPRequestLine.percentDecoded("a%20b+c%zz%4") == "a b+c%zz%4")
        #expect(HTTPRequestLine.percentDecoded("a+b%2Bc", plusIsSpace: true) == "a b+c")
    }

    struct ParseFailure: Error {}
}
