import MeridianCore
import MeridianProtocol

/// Feeds fuzzer bytes to the JSON parser and the request decoder, and a
/// decoded command to a small session.
public enum DecoderHarness {
    public static func run(_ bytes: [UInt8]) throws(Violation) {
        let json = JSONValue.parse(bytes)
        if let json { try jsonRoundTrip(json) }
        try ReferenceParser.agrees(with: json, on: bytes)

        let result = ClientRequest.decode(bytes)
        try require(ClientRequest.decode(bytes) == result, "decoding the same bytes twice gave two results")
        switch result {
        case .failure(let e):
            try require(!e.message.isEmpty && !e.code.rawValue.isEmpty, "error without a code or message: \(e)")
            if case .object(let o)? = json {
                let echoed = JSONValue.parse(e.ref.json)
                try require(echoed == o["ref"] ?? .null, "error carries ref \(e.ref), the request has \(o["ref"] ?? .null)")
            } else {
                // JSONValue.parse refuses a key written twice, which the decoder reads field by field
                // (SPEC §2 rule 7): such an object may fail on any field, the first it reads.
                let objectWithDuplicates = ReferenceParser.mayHaveDuplicateKeys(bytes)
                try require(e.code == .invalidMessage || objectWithDuplicates, "\(e.code.rawValue) for a frame that is not a JSON object: \(e.message)")
            }
        case .success(let request):
            guard case .object? = json else { throw Violation("decoded a request from a frame that is not a JSON object") }
            guard case .object(let o)? = json else { throw Violation("unreachable") }
            try require(JSONValue.parse(request.ref.json) == o["ref"], "ref \(request.ref) is not the request's \(o["ref"] ?? .null)")
            switch o["ref"] {
            case .string(let s)?: try require(!s.isEmpty && s.utf8.count <= 64, "ref string of \(s.utf8.count) bytes")
            case .number(let n)?: try require(n == n.rounded() && request.ref.json.count <= 64, "ref \(request.ref) is not an integer")
            default: throw Violation("ref \(request.ref) is neither a string nor a number")
            }
            if case .command(let command) = request.body { try storedRoundTrip(command) }
            if case .command(let command) = request.body { try applied(command) }
            if case .interest(let interest) = request.body, let filter = interest.filter { try compiled(filter) }
            if case .join(_, let parameters, _) = request.body, let filter = parameters.interest?.filter { try compiled(filter) }
        }
    }

    /// A parsed document written back and parsed again is the same value.
    static func jsonRoundTrip(_ json: JSONValue) throws(Violation) {
        guard json.isFinite else { return }
        let again = JSONValue.parse(json.encoded)
        try require(again == json, "JSON written back parses to \(again.map { "\($0)" } ?? "nothing"), not \(json)")
    }

    /// A decoded filter is within its bounds, compiles again from its text to the same value,
    /// and evaluates (the same way twice) on annotations of every shape, with and without the
    /// fields filters read.
    static func compiled(_ filter: AnnotationFilter) throws(Violation) {
        try require(filter.source.utf8.count <= AnnotationFilter.maxBytes, "a filter of \(filter.source.utf8.count) bytes compiled")
        let again: AnnotationFilter
        do throws(AnnotationFilter.Error) { again = try AnnotationFilter(filter.source) } catch {
            throw Violation("\(filter.source) compiled once, not again: \(error)")
        }
        try require(again == filter, "\(filter.source) compiled to two different filters")
        let at = Coordinate(latitude: 10, longitude: 20)
        let samples = [
            Annotation(id: "a", shape: .point(Point(coordinate: at, image: "pin", draggable: true)), title: "T", subtitle: "S", zIndex: 2,
                       kind: "truck", metadata: ["team": .string("red"), "load": .number(4), "x": .array([]), "n": .null, "b": .bool(true)]),
            Annotation(id: "b", shape: .polyline(Polyline(coordinates: [at, at], alpha: 0.5, strokeColor: Color(red: 255, green: 0, blue: 0), lineWidth: 2))),
            Annotation(id: "c", shape: .polygon(Polygon(coordinates: [at, at, at], fillColor: Color(red: 0, green: 0, blue: 255, alpha: 128))), enabled: false),
        ]
        for a in samples {
            try require(filter.matches(a) == again.matches(a), "\(filter.source) matched \(a.id) once and not again")
        }
    }

    /// Annotations and callouts survive storage's JSON form unchanged.
    static func storedRoundTrip(_ command: Command) throws(Violation) {
        switch command {
        case .addAnnotation(var a) where JSONValue.object(a.metadata).isFinite:
            // Stored annotations are the session's, which numbered them.
            a.revision = 7
            try readBack(a, StoredForm.encode(a)) { bytes throws(ProtocolError) in try StoredForm.annotation(bytes, revisionIfAbsent: 1) }
        case .showCallout(let c):
            try readBack(c, StoredForm.encode(c), StoredForm.callout)
        default: break
        }
    }

    static func readBack<T: Equatable>(_ value: T, _ bytes: [UInt8], _ read: ([UInt8]) throws(ProtocolError) -> T) throws(Violation) {
        let text = String(decoding: bytes, as: UTF8.self)
        let back: T
        do throws(ProtocolError) { back = try read(bytes) } catch { throw Violation("stored form \(text) cannot be read back: \(error)") }
        try require(back == value, "\(value) is stored as \(text) and read back as \(back)")
    }

    /// The command from the owner, then from the viewer, of a session with a
    /// draggable pin, with every session invariant checked.
    static func applied(_ command: Command) throws(Violation) {
        var settings = SessionSettings()
        settings.dragPolicy = .exclusive
        var run = SessionHarness.Run(session: Session(id: "harbour", epoch: "e1", settings: settings))
        for slot in SessionHarness.slots.indices { try run.join(slot) }
        try run.apply(.addAnnotation(Annotation(
            id: "flag", shape: .point(Point(coordinate: Pools.coordinates[0], draggable: true, canShowCallout: true)), title: "Flag")), slot: 0)
        try run.apply(command, slot: 0)
        try run.apply(command, slot: 3)
    }
}
