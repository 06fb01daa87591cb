extension AnnotationFilter {
    /// Whether `a` passes the filter.
    ///
    /// A field the annotation lacks (a nil `kind`, `title`, `subtitle`, `image`, `strokeColor`
    /// or `fillColor`; a style field of another shape; a metadata key absent or `null`) makes
    /// every comparison false except `= null`, which is true; `not` inverts whatever it
    /// applies to. A metadata value that is an array or an object equals no literal.
    public func matches(_ a: Annotation) -> Bool {
        root.matches(a)
    }
}

extension AnnotationFilter.Node {
    func matches(_ a: Annotation) -> Bool {
        switch self {
        case .or(let terms): terms.contains { $0.matches(a) }
        case .and(let terms): terms.allSatisfy { $0.matches(a) }
        case .not(let term): !term.matches(a)
        case .test(let field, let test): test.holds(for: field.value(of: a))
        }
    }
}

extension AnnotationFilter {
    /// What a field of one annotation holds.
    enum Found {
        /// Absent, or `null`.
        case missing
        case value(AnnotationFilter.Value)
        /// A metadata array or object: present, but equal to no literal.
        case composite
    }
}

extension AnnotationFilter.Field {
    func value(of a: Annotation) -> AnnotationFilter.Found {
        func text(_ s: String?) -> AnnotationFilter.Found { s.map { .value(.string($0)) } ?? .missing }
        func colour(_ c: Color?) -> AnnotationFilter.Found { c.map { .value(.string($0.description)) } ?? .missing }
        switch self {
        case .id: return .value(.string(a.id))
        case .type: return .value(.string(a.shape.name))
        case .kind: return text(a.kind)
        case .title: return text(a.title)
        case .subtitle: return text(a.subtitle)
        case .zIndex: return .value(.number(Double(a.zIndex)))
        case .enabled: return .value(.bool(a.enabled))
        case .draggable: return a.point.map { .value(.bool($0.draggable)) } ?? .missing
        case .image: return text(a.point?.image)
        case .strokeColor:
            switch a.shape {
            case .point: return .missing
            case .polyline(let l): return colour(l.strokeColor)
            case .polygon(let p): return colour(p.strokeColor)
            }
        case .fillColor:
            if case .polygon(let p) = a.shape { return colour(p.fillColor) }
            return .missing
        case .lineWidth:
            if case .polyline(let l) = a.shape { return .value(.number(l.lineWidth)) }
            return .missing
        case .alpha:
            switch a.shape {
            case .point: return .missing
            case .polyline(let l): return .value(.number(l.alpha))
            case .polygon(let p): return .value(.number(p.alpha))
            }
        case .metadata(let key):
            switch a.metadata[key] {
            case nil, .null?: return .missing
            case .bool(let b)?: return .value(.bool(b))
            case .number(let n)?: return .value(.number(n))
            case .string(let s)?: return .value(.string(s))
            case .array?, .object?: return .composite
            }
        }
    }
}

extension AnnotationFilter.Test {
    /// `in` is `=` with any of its values, `not in` is `!=` with every one of them.
    func holds(for found: AnnotationFilter.Found) -> Bool {
        switch found {
        case .missing:
            switch self {
            case .equal(let v): return v == .null
            case .among(let values): return values.contains(.null)
            default: return false
            }
        case .composite:
            switch self {
            case .notEqual, .notAmong: return true
            default: return false
            }
        case .value(let v):
            switch self {
            case .equal(let w): return v == w
            case .notEqual(let w): return v != w
            case .among(let values): return values.contains(v)
            case .notAmong(let values): return !values.contains(v)
            case .order(let order, let w):
                guard case .number(let n) = v else { return false }
                switch order {
                case .less: return n < w
                case .lessOrEqual: return n <= w
                case .greater: return n > w
                case .greaterOrEqual: return n >= w
                }
            case .between(let low, let high):
                guard case .number(let n) = v else { return false }
                return low <= n && n <= high
            }
        }
    }
}
