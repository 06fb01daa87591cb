import Testing
@testable import MeridianCore

/// The filter language of viewport interest (SPEC §4.7): every operator, precedence, missing
/// fields, metadata, and errors naming the position of the problem, including every bound.
@Suite struct AnnotationFilterTests {
    static let truck = Annotation(
        id: "t1", shape: .point(Point(coordinate: C(1, 2), image: "truck.png", draggable: true)), title: "Truck 1", zIndex: 3,
        kind: "truck", metadata: ["team": .string("red"), "load": .number(7), "ok": .bool(true), "none": .null,
                                  "tags": .array([.string("a")]), "a key": .string("x'y")])
    static let road = Annotation(
        id: "r1", shape: .polyline(Polyline(coordinates: [C(0, 0), C(1, 1)], alpha: 0.5, strokeColor: Color(hex: "#FF0000"), lineWidth: 4)),
        zIndex: -1, enabled: false, kind: "road")
    static let lake = Annotation(
        id: "l1", shape: .polygon(Polygon(coordinates: [C(0, 0), C(0, 1), C(1, 1)], fillColor: Color(hex: "#00f"))),
        subtitle: "deep", metadata: ["load": .string("12")])
    static let all = [truck, road, lake]

    /// The ids of the annotations `filter` matches.
    func ids(_ filter: String, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String] {
        let f = try AnnotationFilter(filter)
        return Self.all.filter(f.matches).map(\.id)
    }

    func error(_ filter: String) -> AnnotationFilter.Error? {
        do throws(AnnotationFilter.Error) {
            _ = try AnnotationFilter(filter)
            return nil
        } catch {
            return error
        }
    }

    @Test func equalityAndInequality() throws {
        #expect(try ids("kind = 'truck'") == ["t1"])
        #expect(try ids("kind != 'truck'") == ["r1"])  // the lake has no kind: != is false
        #expect(try ids("kind <> 'truck'") == ["r1"])
        #expect(try ids("id = 'l1'") == ["l1"])
        #expect(try ids("type = 'polygon'") == ["l1"])
        #expect(try ids("type != 'point'") == ["r1", "l1"])
        #expect(try ids("title = \"Truck 1\"") == ["t1"])
        #expect(try ids("subtitle = 'deep'") == ["l1"])
        #expect(try ids("zIndex = 3") == ["t1"])
        #expect(try ids("zIndex = 3.0") == ["t1"])
        #expect(try ids("enabled = false") == ["r1"])
        #expect(try ids("draggable = true") == ["t1"])
        #expect(try ids("image = 'truck.png'") == ["t1"])
        #expect(try ids("lineWidth = 4") == ["r1"])
        #expect(try ids("alpha = 1") == ["l1"])
    }

    @Test func coloursCompareInAnyWrittenForm() throws {
        #expect(try ids("strokeColor = '#f00'") == ["r1"])
        #expect(try ids("strokeColor = '#FF0000ff'") == ["r1"])
        #expect(try ids("fillColor in ('#0000FF', '#123')") == ["l1"])
        // A colour not set follows the tint: the field is missing.
        #expect(try ids("strokeColor = null") == ["t1", "l1"])
        #expect(try ids("fillColor != '#000'") == ["l1"])
    }

    @Test func orderingAndBetweenAreNumeric() throws {
        #expect(try ids("zIndex < 0") == ["r1"])
        #expect(try ids("zIndex <= 0") == ["r1", "l1"])
        #expect(try ids("zIndex > 0") == ["t1"])
        #expect(try ids("zIndex >= -1") == ["t1", "r1", "l1"])
        #expect(try ids("zIndex between -1 and 0") == ["r1", "l1"])
        #expect(try ids("zIndex between 0 and -1") == [])
        #expect(try ids("metadata.load between 1 and 10") == ["t1"])  // the lake's load is a string
        #expect(try ids("metadata.load > 1e0") == ["t1"])
        #expect(try ids("alpha < 0.75") == ["r1"])
        #expect(try ids("lineWidth >= 3") == ["r1"])  // only polylines have a line width
    }

    @Test func inAndNotIn() throws {
        #expect(try ids("kind in ('truck', 'road')") == ["t1", "r1"])
        #expect(try ids("kind not in ('truck')") == ["r1"])
        #expect(try ids("kind in ('road', null)") == ["r1", "l1"])
        #expect(try ids("kind NOT IN ('road', null)") == ["t1"])
        #expect(try ids("metadata.load in (7, '12')") == ["t1", "l1"])
        #expect(try ids("zIndex in (3, -1)") == ["t1", "r1"])
    }

    @Test func precedenceNotOverAndOverOr() throws {
        // and binds tighter than or.
        #expect(try ids("kind = 'road' or kind = 'truck' and zIndex = 0") == ["r1"])
        #expect(try ids("(kind = 'road' or kind = 'truck') and zIndex = 3") == ["t1"])
        // not binds tighter than and.
        #expect(try ids("not kind = 'truck' and type = 'polyline'") == ["r1"])
        #expect(try ids("not (kind = 'truck' or type = 'polyline')") == ["l1"])
        #expect(try ids("not not kind = 'truck'") == ["t1"])
        #expect(try ids("kind = 'road' or not kind = 'road' and kind = 'truck'") == ["t1", "r1"])
    }

    @Test func keywordsAreCaseInsensitive() throws {
        #expect(try ids("kind = 'truck' OR kind = 'road'") == ["t1", "r1"])
        #expect(try ids("NOT kind IN ('truck') And zIndex BETWEEN -5 AND 5") == ["r1", "l1"])
        #expect(try ids("metadata.ok = TRUE and title != NULL") == ["t1"])
        // Field names are not keywords: they are written as the annotation's JSON names.
        #expect(error("KIND = 'truck'")?.reason == "unknown field \"KIND\"")
    }

    @Test func missingFieldsAreFalseExceptEqualNull() throws {
        // The lake has no kind, title, image or draggable; the truck no strokeColor or alpha.
        #expect(try ids("kind = null") == ["l1"])
        #expect(try ids("kind != null") == ["t1", "r1"])
        #expect(try ids("not kind = null") == ["t1", "r1"])
        #expect(try ids("metadata.absent < 5 or metadata.absent >= 5") == [])
        #expect(try ids("draggable = false") == [])
        #expect(try ids("not draggable = true") == ["r1", "l1"])
        #expect(try ids("alpha > 0") == ["r1", "l1"])
        #expect(try ids("image in ('truck.png', 'x')") == ["t1"])
        #expect(try ids("image not in ('x')") == ["t1"])
    }

    @Test func metadata() throws {
        #expect(try ids("metadata.team = 'red'") == ["t1"])
        #expect(try ids("metadata.team in ('red', 'blue')") == ["t1"])
        #expect(try ids("metadata.ok = true") == ["t1"])
        #expect(try ids("metadata.ok = 'true'") == [])
        // A null value counts as missing.
        #expect(try ids("metadata.none = null") == ["t1", "r1", "l1"])
        #expect(try ids("metadata.none != null") == [])
        // Arrays and objects equal no literal.
        #expect(try ids("metadata.tags = 'a'") == [])
        #expect(try ids("metadata.tags != 'a'") == ["t1"])
        #expect(try ids("metadata.tags = null") == ["r1", "l1"])
        #expect(try ids("metadata['a key'] = 'x''y'") == ["t1"])
        #expect(try ids("metadata[\"a key\"] = \"x'y\"") == ["t1"])
        #expect(try ids("metadata.team != 'blue'") == ["t1"])
    }

    @Test func errorsNameThePosition() {
        let cases: [(String, Int, String)] = [
            ("kind in (", 10, "expected a value after \"kind in (\""),
            ("kind = 'truck' and metadata.team in (", 38, "expected a value after \"metadata.team in (\""),
            ("colour = 'red'", 1, "unknown field \"colour\""),
            ("zIndex = 'x'", 10, "zIndex is a number"),
            ("enabled = 1", 11, "enabled is a boolean"),
            ("title > 3", 9, "compares numbers, and title is a string"),
            ("metadata.load between 'a' and 3", 23, "between compares numbers"),
            ("metadata.load between 1 3", 25, "expected \"and\""),
            ("type = 'circle'", 8, "type is point, polyline or polygon"),
            ("strokeColor = 'red'", 15, "strokeColor is a colour"),
            ("kind = 'truck", 8, "never closed"),
            ("kind = 'a' kind", 12, "expected \"and\", \"or\" or the end"),
            ("(kind = 'a'", 12, "expected \")\" to close the \"(\" at 1"),
            ("kind", 5, "expected a comparison"),
            ("", 1, "expected a field, got the end"),
            ("and = 1", 1, "expected a field"),
            ("zIndex = 01", 11, "unexpected \"1\" in a number"),
            ("zIndex = 1e999", 10, "out of range"),
            ("zIndex = -", 11, "expected a digit"),
            ("kind = 'a' ; drop", 12, "unexpected character \";\""),
            ("metadata.", 10, "expected a metadata key"),
            ("metadata[team] = 1", 10, "expected a quoted metadata key"),
            ("metadata = 1", 10, "expected \".\" or \"[\""),
            ("kind not = 'a'", 10, "expected \"in\""),
            ("kind in 'a'", 9, "expected \"(\""),
            ("kind in ('a' 'b')", 14, "expected \",\" or \")\""),
            // Positions count characters, not bytes.
            ("title = 'Zürich' and é", 22, "unexpected character"),
        ]
        for (filter, position, reason) in cases {
            let e = error(filter)
            #expect(e?.position == position, "\(filter): \(e.map(\.description) ?? "compiled")")
            #expect(e?.reason.contains(reason) == true, "\(filter): \(e.map(\.description) ?? "compiled")")
            #expect(e?.description.hasPrefix("at \(position): ") == true)
        }
    }

    @Test func bounds() throws {
        // Bytes: 1 024 compile, 1 025 do not (the error names the first character past the bound).
        let pad = "kind = '" + String(repeating: "x", count: 1024 - 9) + "'"
        #expect(pad.utf8.count == 1024)
        _ = try AnnotationFilter(pad)
        let over = "kind = '" + String(repeating: "é", count: 508) + "'"
        #expect(over.utf8.count == 1025)
        #expect(error(over)?.position == 517)

        // Depth: 16 levels of parentheses and `not` compile, 17 do not.
        let deep = String(repeating: "(", count: 8) + String(repeating: "not ", count: 8) + "kind = 'a'" + String(repeating: ")", count: 8)
        _ = try AnnotationFilter(deep)
        let deeper = "not " + deep
        #expect(error(deeper)?.reason.contains("nested deeper than 16") == true)
        #expect(error(String(repeating: "(", count: 17) + "kind = 'a'" + String(repeating: ")", count: 17))?.position == 17)

        // Comparisons: 32 compile, 33 do not; the error names the 33rd.
        let comparisons = (0..<32).map { "zIndex = \($0)" }.joined(separator: " or ")
        _ = try AnnotationFilter(comparisons)
        let more = comparisons + " or kind = 'x'"
        #expect(error(more)?.position == comparisons.count + 5)
        #expect(error(more)?.reason.contains("more than 32 comparisons") == true)

        // Values: 64 in one list compile, 65 do not; the error names the 65th.
        let list = (0..<64).map(String.init).joined(separator: ",")
        _ = try AnnotationFilter("zIndex in (\(list))")
        let e = error("zIndex in (\(list),64)")
        #expect(e?.position == "zIndex in (\(list),".count + 1)
        #expect(e?.reason.contains("more than 64 values") == true)
    }

    @Test func compiledFormsAreValues() throws {
        let a = try AnnotationFilter("kind in ('a', 'b')")
        let b = try AnnotationFilter("kind in ('b', 'a')")
        #expect(a.root == b.root)  // lists are sets
        #expect(a != b)  // the source differs, and the view echoes it
        #expect(a == (try AnnotationFilter("kind in ('a', 'b')")))
        #expect(a.description == "kind in ('a', 'b')")
    }
}
