/// An attribute filter of viewport interest (SPEC §4.7): which annotations a member receives,
/// by type, style fields and metadata, written as a small SQL-where-like expression, e.g.
/// `kind = 'truck' and metadata.team in ('red', 'blue') and not type = 'polygon'`.
///
/// Compiled once (``init(_:)``) into a tree whose fields are resolved, whose `in` lists are
/// sets and whose numbers are `Double`s; ``matches(_:)`` only walks that tree. Nothing of the
/// text is executed, and the bounds below hold the work per annotation to a few dozen tests.
public struct AnnotationFilter: Hashable, Sendable, CustomStringConvertible {
    /// The filter as the client wrote it (the server echoes it in the member's view).
    public let source: String
    let root: Node

    /// The most UTF-8 bytes a filter may have.
    public static let maxBytes = 1024
    /// The most levels of parentheses and `not` a filter may nest.
    public static let maxDepth = 16
    /// The most comparisons (`in` and `between` count as one each) a filter may hold.
    public static let maxComparisons = 32
    /// The most values one `in` list may hold.
    public static let maxListValues = 64

    /// An annotation field a filter can test.
    public enum Field: Hashable, Sendable {
        /// The common fields: `id`, `type` (the shape's name), `kind`, `title`, `subtitle`, `zIndex`, `enabled`.
        case id, type, kind, title, subtitle, zIndex, enabled
        /// Shape fields: `draggable`, `image` (points); `strokeColor`, `alpha` (polylines, polygons); `fillColor` (polygons); `lineWidth` (polylines).
        case draggable, image, strokeColor, fillColor, lineWidth, alpha
        /// The metadata value under a key (`metadata.KEY` or `metadata['key']`).
        case metadata(String)

        /// What a field's literals must be (metadata takes any).
        enum Kind { case string, number, bool, colour, shapeType, any }

        static let named: [String: Field] = [
            "id": .id, "type": .type, "kind": .kind, "title": .title, "subtitle": .subtitle, "zIndex": .zIndex,
            "enabled": .enabled, "draggable": .draggable, "image": .image, "strokeColor": .strokeColor,
            "fillColor": .fillColor, "lineWidth": .lineWidth, "alpha": .alpha,
        ]

        var kind: Kind {
            switch self {
            case .id, .kind, .title, .subtitle, .image: .string
            case .zIndex, .lineWidth, .alpha: .number
            case .enabled, .draggable: .bool
            case .strokeColor, .fillColor: .colour
            case .type: .shapeType
            case .metadata: .any
            }
        }
    }

    /// A literal: what a field's value is compared with.
    public enum Value: Hashable, Sendable {
        /// `null`: equal to a missing field.
        case null
        /// `true` or `false`.
        case bool(Bool)
        /// A JSON number.
        case number(Double)
        /// A quoted string (colours and shape types are written as strings too).
        case string(String)
    }

    /// A numeric ordering comparison.
    enum Order: Hashable, Sendable { case less, lessOrEqual, greater, greaterOrEqual }

    /// One comparison of a field.
    enum Test: Hashable, Sendable {
        case equal(Value)
        case notEqual(Value)
        case order(Order, Double)
        case among(Set<Value>)
        case notAmong(Set<Value>)
        case between(Double, Double)
    }

    indirect enum Node: Hashable, Sendable {
        case or([Node])
        case and([Node])
        case not(Node)
        case test(Field, Test)
    }

    /// Why a filter does not compile: the 1-based position (in characters of the filter) and
    /// what is wrong there.
    public struct Error: Swift.Error, Hashable, Sendable, CustomStringConvertible {
        /// The 1-based character position of the problem in the filter.
        public let position: Int
        /// What is wrong at that position, in words.
        public let reason: String
        /// `at POSITION: REASON`.
        public var description: String { "at \(position): \(reason)" }
    }

    /// The filter's source text, as written.
    public var description: String { source }

    // The same text always compiles to the same tree: comparing and hashing the text is enough,
    // and costs no walk of the tree when a member's view is compared with its last one.
    /// Whether the two filters have the same source text.
    public static func == (a: AnnotationFilter, b: AnnotationFilter) -> Bool { a.source == b.source }
    /// Hashes the source text, consistently with `==`.
    public func hash(into hasher: inout Hasher) { hasher.combine(source) }

    /// Compiles `source`; throws an ``Error`` naming the position of the first problem.
    public init(_ source: String) throws(AnnotationFilter.Error) {
        var parser = try Parser(source)
        root = try parser.parse()
        self.source = source
    }
}
