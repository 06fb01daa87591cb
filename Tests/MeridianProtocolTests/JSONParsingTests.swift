import MeridianCore
import MeridianProtocol
import Testing

@Suite("Parsing JSON from bytes")
struct JSONParsingTests {
    func parse(_ text: String) -> JSONValue? { JSONValue.parse(Array(text.utf8)) }

    @Test func valuesOfEveryKind() {
        #expect(parse(#" {"a": [1, -2.5, 3e2, true, false, null, "x"], "b": {}} "#) == .object([
            "a": .array([.number(1), .number(-2.5), .number(300), .bool(true), .bool(false), .null, .string("x")]),
            "b": .object([:]),
        ]))
        #expect(parse("[]") == .array([]))
        #expect(parse(#""""#) == .string(""))
        #expect(parse("0") == .number(0))
    }

    @Test func escapesAndUnicode() {
        #expect(parse(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{8}\u{c}\n\r\t"))
        #expect(parse(#""\u00e9\u20ac\ud83d\ude00""#) == .string("é€😀"))
        #expect(parse("\"é€😀\"") == .string("é€😀"))
        #expect(parse(#""\u0000""#) == .string("\u{0}"))
    }

    @Test(arguments: [
        "", " ", "[", "]", "{", "[1,]", #"{"a":1,}"#, "[1 2]", #"{"a" 1}"#, #"{a:1}"#, "01", "-", "1.", ".5", "1e", "+1",
        "NaN", "Infinity", "-Infinity", "nul", "tru", "[1] x", #""\x""#, #""\u12""#, #""\ud800""#, #""\udc00x""#,
        #""\ud800\u0041""#, "\"a\u{1}b\"", "'a'", "[1]]", "{}{}", "\u{feff}[]",
    ])
    func refusedTexts(_ text: String) {
        #expect(parse(text) == nil, "accepted \(text.debugDescription)")
    }

    @Test func invalidUTF8IsRefused() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], [0x22, 0xE2, 0x82, 0x22]] {
            #expect(JSONValue.parse(bytes) == nil, "accepted \(bytes)")
        }
        #expect(JSONValue.parse([0x22, 0xF0, 0x9F, 0x98, 0x80, 0x22]) == .string("😀"))
    }

    @Test func aKeyWrittenTwiceIsRefused() {
        #expect(parse(#"{"a":1,"a":2}"#) == nil)
        #expect(parse(#"{"a":1,"\u0061":2}"#) == nil)
    }

    @Test func nestingIsLimitedTo512() {
        #expect(parse(String(repeating: "[", count: 512) + String(repeating: "]", count: 512)) != nil)
        #expect(parse(String(repeating: "[", count: 513) + String(repeating: "]", count: 513)) == nil)
        #expect(parse(String(repeating: "[", count: 100_000)) == nil)
    }

    @Test func numbersAreTheNearestDouble() {
        let cases: [(String, Double)] = [
            ("51.5007", 51.5007), ("-0.1276", -0.1276), ("1e-7", 1e-7), ("123456789012345678", 123456789012345678),
            ("9007199254740993", 9007199254740992), ("0.1", 0.1), ("2.2250738585072014e-308", 2.2250738585072014e-308),
            ("1.7976931348623157e308", 1.7976931348623157e308), ("5e-324", 5e-324), ("-0", -0.0), ("1E+2", 100),
            ("3.141592653589793238462643383279", 3.141592653589793),
        ]
        for (text, expected) in cases {
            guard case .number(let n)? = parse(text) else { Issue.record("not a number: \(text)"); continue }
            #expect(n == expected && n.sign == expected.sign, "\(text) read as \(n)")
        }
    }

    @Test func writtenAndReadBackIsTheSameValue() {
        let value: JSONValue = .object(["s": .string("a\"b\\c\n\u{1}é"), "n": .array([.number(0.1), .number(-3), .number(1e300)]), "z": .null])
        #expect(JSONValue.parse(value.encoded) == value)
    }
}

@Suite("The ref of a request")
struct RequestRefTests {
    func ref(_ text: String) -> String? {
        switch ClientRequest.decode(Array(#"{"type":"ping","ref":\#(text)}"#.utf8)) {
        case .success(let r): r.ref.description
        case .failure(let e): "refused \(e.ref.description) \(e.field ?? "")"
        }
    }

    @Test func isEchoedAsWritten() {
        #expect(ref("7") == "7")
        #expect(ref(#""r-1""#) == #""r-1""#)
        #expect(ref("9007199254740993") == "9007199254740993")
        #expect(ref("123456789012345678901234567890") == "123456789012345678901234567890")
        #expect(ref("-0") == "-0")
        #expect(ref("1.0") == "1.0")
        #expect(ref(#""\u00e9""#) == #""\u00e9""#)
    }

    @Test func anInvalidRefIsRefusedAndStillEchoedAsWritten() {
        #expect(ref("1.5") == "refused 1.5 ref")
        #expect(ref(#""""#) == #"refused "" ref"#)
        #expect(ref("[1, 2]") == "refused [1, 2] ref")
        #expect(ref("null") == "refused null ref")
        #expect(ref("1" + String(repeating: "0", count: 64)) == "refused 1" + String(repeating: "0", count: 64) + " ref")
    }

    @Test func metadataIntegersBeyond2to53AreRefusedByPath() {
        let request = #"{"type":"annotation.add","ref":1,"annotation":{"id":"a","type":"point","coordinate":{"latitude":0,"longitude":0},"metadata":{"ok":9007199254740991,"list":[1,{"big":-9007199254740992}]}}}"#
        guard case .failure(let e) = ClientRequest.decode(Array(request.utf8)) else { Issue.record("accepted"); return }
        #expect(e.code == .invalidField)
        #expect(e.field == "annotation.metadata.list[1].big")
        let exact = #"{"type":"annotation.add","ref":1,"annotation":{"id":"a","type":"point","coordinate":{"latitude":0,"longitude":0},"metadata":{"big":9007199254740991,"float":9.1e15}}}"#
        guard case .success(let r) = ClientRequest.decode(Array(exact.utf8)), case .command(.addAnnotation(let a)) = r.body else {
            Issue.record("refused")
            return
        }
        #expect(a.metadata == ["big": .number(9_007_199_254_740_991), "float": .number(9.1e15)])
    }
}
