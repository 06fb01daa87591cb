extension AnnotationFilter {
    /// A recursive-descent parser of the filter grammar (SPEC §4.7):
    ///
    ///     filter     = or
    ///     or         = and { "or" and }
    ///     and        = not { "and" not }
    ///     not        = "not" not | "(" filter ")" | comparison
    ///     comparison = field ( op value | ["not"] "in" "(" value { "," value } ")"
    ///                        | "between" number "and" number )
    ///     field      = name | "metadata" "." name | "metadata" "[" string "]"
    ///
    /// Keywords are case-insensitive; recursion is bounded by ``AnnotationFilter/maxDepth``.
    struct Parser {
        private let tokens: [Token]
        private var at = 0
        private var depth = 0
        private var comparisons = 0

        init(_ source: String) throws(AnnotationFilter.Error) {
            tokens = try AnnotationFilter.tokens(of: source)
        }

        mutating func parse() throws(AnnotationFilter.Error) -> Node {
            let node = try parseOr()
            guard case .end = current.kind else {
                throw Error(position: current.position, reason: "expected \"and\", \"or\" or the end, got \(shown(current))")
            }
            return node
        }

        private var current: Token { tokens[at] }

        private mutating func advance() -> Token {
            defer { if at < tokens.count - 1 { at += 1 } }
            return tokens[at]
        }

        private func shown(_ t: Token) -> String {
            if case .end = t.kind { return "the end" }
            return "\"\(t.text)\""
        }

        private mutating func parseOr() throws(AnnotationFilter.Error) -> Node {
            var terms = [try parseAnd()]
            while current.isKeyword("or") {
                _ = advance()
                terms.append(try parseAnd())
            }
            return terms.count == 1 ? terms[0] : .or(terms)
        }

        private mutating func parseAnd() throws(AnnotationFilter.Error) -> Node {
            var terms = [try parseNot()]
            while current.isKeyword("and") {
                _ = advance()
                terms.append(try parseNot())
            }
            return terms.count == 1 ? terms[0] : .and(terms)
        }

        private mutating func parseNot() throws(AnnotationFilter.Error) -> Node {
            if current.isKeyword("not") || current.isSymbol("(") {
                let opening = advance()
                depth += 1
                guard depth <= AnnotationFilter.maxDepth else {
                    throw Error(position: opening.position, reason: "nested deeper than \(AnnotationFilter.maxDepth) levels of parentheses and \"not\"")
                }
                defer { depth -= 1 }
                if opening.isSymbol("(") {
                    let inner = try parseOr()
                    guard current.isSymbol(")") else {
                        throw Error(position: current.position, reason: "expected \")\" to close the \"(\" at \(opening.position), got \(shown(current))")
                    }
                    _ = advance()
                    return inner
                }
                return .not(try parseNot())
            }
            return try parseComparison()
        }

        private mutating func parseComparison() throws(AnnotationFilter.Error) -> Node {
            let start = current
            let (field, name) = try parseField()
            comparisons += 1
            guard comparisons <= AnnotationFilter.maxComparisons else {
                throw Error(position: start.position, reason: "more than \(AnnotationFilter.maxComparisons) comparisons")
            }
            let op = advance()
            if case .symbol(let s) = op.kind, ["=", "!=", "<", "<=", ">", ">="].contains(s) {
                let (value, at) = try parseValue(after: "\(name) \(s)")
                switch s {
                case "=", "!=":
                    let v = try AnnotationFilter.checked(value, for: field, name, at: at)
                    return .test(field, s == "=" ? .equal(v) : .notEqual(v))
                default:
                    let n = try number(value, field: field, name, at: at, op: s)
                    let order: Order = switch s {
                    case "<": .less
                    case "<=": .lessOrEqual
                    case ">": .greater
                    default: .greaterOrEqual
                    }
                    return .test(field, .order(order, n))
                }
            }
            if op.isKeyword("not") {
                guard current.isKeyword("in") else {
                    throw Error(position: current.position, reason: "expected \"in\" after \"\(name) not\", got \(shown(current))")
                }
                _ = advance()
                return .test(field, .notAmong(try parseList(field, name, after: "\(name) not in")))
            }
            if op.isKeyword("in") {
                return .test(field, .among(try parseList(field, name, after: "\(name) in")))
            }
            if op.isKeyword("between") {
                let (low, lowAt) = try parseValue(after: "\(name) between")
                let a = try number(low, field: field, name, at: lowAt, op: "between")
                guard current.isKeyword("and") else {
                    throw Error(position: current.position, reason: "expected \"and\" after \"\(name) between \(low.literal)\", got \(shown(current))")
                }
                _ = advance()
                let (high, highAt) = try parseValue(after: "\(name) between \(low.literal) and")
                let b = try number(high, field: field, name, at: highAt, op: "between")
                return .test(field, .between(a, b))
            }
            throw Error(position: op.position, reason: "expected a comparison (=, !=, <, <=, >, >=, in, not in, between) after \"\(name)\", got \(shown(op))")
        }

        /// A field and its name as written (`metadata.team`, `metadata['a key']`).
        private mutating func parseField() throws(AnnotationFilter.Error) -> (Field, String) {
            let t = advance()
            guard case .word(let word) = t.kind, t.keyword == nil else {
                throw Error(position: t.position, reason: "expected a field, got \(shown(t))")
            }
            guard word == "metadata" else {
                guard let field = Field.named[word] else { throw Error(position: t.position, reason: "unknown field \"\(word)\"") }
                return (field, word)
            }
            let punct = advance()
            if punct.isSymbol(".") {
                let key = advance()
                guard case .word(let name) = key.kind else {
                    throw Error(position: key.position, reason: "expected a metadata key after \"metadata.\", got \(shown(key))")
                }
                return (.metadata(name), "metadata.\(name)")
            }
            if punct.isSymbol("[") {
                let key = advance()
                guard case .string(let name) = key.kind else {
                    throw Error(position: key.position, reason: "expected a quoted metadata key after \"metadata[\", got \(shown(key))")
                }
                let close = advance()
                guard close.isSymbol("]") else {
                    throw Error(position: close.position, reason: "expected \"]\" after \"metadata[\(key.text)\", got \(shown(close))")
                }
                return (.metadata(name), "metadata[\(key.text)]")
            }
            throw Error(position: punct.position, reason: "expected \".\" or \"[\" after \"metadata\", got \(shown(punct))")
        }

        /// A literal and its position.
        private mutating func parseValue(after what: String) throws(AnnotationFilter.Error) -> (Value, Int) {
            let t = advance()
            switch t.kind {
            case .string(let s): return (.string(s), t.position)
            case .number(let n): return (.number(n), t.position)
            default:
                switch t.keyword {
                case "true": return (.bool(true), t.position)
                case "false": return (.bool(false), t.position)
                case "null": return (.null, t.position)
                default: throw Error(position: t.position, reason: "expected a value after \"\(what)\", got \(shown(t))")
                }
            }
        }

        private mutating func parseList(_ field: Field, _ name: String, after what: String) throws(AnnotationFilter.Error) -> Set<Value> {
            let open = advance()
            guard open.isSymbol("(") else { throw Error(position: open.position, reason: "expected \"(\" after \"\(what)\", got \(shown(open))") }
            var values: Set<Value> = []
            var count = 0
            while true {
                let (value, at) = try parseValue(after: count == 0 ? "\(what) (" : "\",\"")
                count += 1
                guard count <= AnnotationFilter.maxListValues else {
                    throw Error(position: at, reason: "more than \(AnnotationFilter.maxListValues) values in one \"in\" list")
                }
                values.insert(try AnnotationFilter.checked(value, for: field, name, at: at))
                let next = advance()
                if next.isSymbol(")") { return values }
                guard next.isSymbol(",") else {
                    throw Error(position: next.position, reason: "expected \",\" or \")\" in the list after \"\(what)\", got \(shown(next))")
                }
            }
        }

        /// The number of an ordering comparison or `between`; the field must be a number (or metadata).
        private func number(_ value: Value, field: Field, _ name: String, at: Int, op: String) throws(AnnotationFilter.Error) -> Double {
            guard field.kind == .number || field.kind == .any else {
                throw Error(position: at, reason: "\(op) compares numbers, and \(name) is \(field.kind.noun)")
            }
            guard case .number(let n) = value else {
                throw Error(position: at, reason: "\(op) compares numbers, got \(value.literal)")
            }
            return n
        }
    }

    /// `value` as the field holds it (a colour in the server's lower-case form), or an error
    /// when it can never equal the field's values (null always can: a missing field).
    static func checked(_ value: Value, for field: Field, _ name: String, at position: Int) throws(AnnotationFilter.Error) -> Value {
        let fits: Bool
        switch (field.kind, value) {
        case (_, .null), (.any, _), (.string, .string), (.number, .number), (.bool, .bool): fits = true
        case (.colour, .string(let s)):
            guard let colour = Color(hex: s) else {
                throw Error(position: position, reason: "\(name) is a colour (#rgb, #rrggbb or #rrggbbaa), got \(value.literal)")
            }
            return .string(colour.description)
        case (.shapeType, .string(let s)):
            guard ["point", "polyline", "polygon"].contains(s) else {
                throw Error(position: position, reason: "type is point, polyline or polygon, got \(value.literal)")
            }
            fits = true
        default: fits = false
        }
        guard fits else { throw Error(position: position, reason: "\(name) is \(field.kind.noun): \(value.literal) cannot match it") }
        return value
    }
}

extension AnnotationFilter.Field.Kind {
    var noun: String {
        switch self {
        case .string: "a string"
        case .number: "a number"
        case .bool: "a boolean"
        case .colour: "a colour"
        case .shapeType: "a shape type"
        case .any: "any value"
        }
    }
}

extension AnnotationFilter.Value {
    /// The literal as a filter writes it.
    var literal: String {
        switch self {
        case .null: "null"
        case .bool(let b): b ? "true" : "false"
        case .number(let n): n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : "\(n)"
        case .string(let s): "'" + s.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "''") + "'"
        }
    }
}
