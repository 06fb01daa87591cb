import MeridianCore

/// Reads the fields of one JSON object of a parsed request, naming each by its dotted path
/// in errors, and refuses fields it was never asked for (``finish()``) and fields written
/// twice.
///
/// A view into a ``JSONDocument``: values are read from the request's bytes when asked for,
/// and the document remembers which keys were read.
struct Fields {
    let document: JSONDocument
    let node: Int
    let path: String

    init(document: JSONDocument, node: Int, path: String) throws(ProtocolError) {
        guard document.nodes[node].kind == .object else { throw .invalid(path.isEmpty ? "message" : path, "must be an object") }
        self.document = document
        self.node = node
        self.path = path
    }

    /// Fields of a generic value, for values that do not come from a request's bytes.
    init(_ value: JSONValue, path: String) throws(ProtocolError) {
        guard case .success(let document) = JSONDocument.parseCopy(value.encoded) else {
            throw .invalid(path.isEmpty ? "message" : path, "must be an object")
        }
        try self.init(document: document, node: 0, path: path)
    }

    func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// The node of `key`, marked read; nil when absent, or `null` unless `keepNull`.
    func lookup(_ key: String, keepNull: Bool = false) throws(ProtocolError) -> Int? {
        guard let index = document.member(key, of: node) else { return nil }
        if !keepNull && document.nodes[index].kind == .null { return nil }
        return index
    }

    /// The raw value as a generic JSON value; nil when absent. `null` counts as absent unless `keepNull`.
    func value(_ key: String, keepNull: Bool = false) -> JSONValue? {
        guard let index = try? lookup(key, keepNull: keepNull) else { return nil }
        return document.value(at: index)
    }

    func has(_ key: String) -> Bool {
        var children = document.children(of: node)
        while let keyIndex = children.next(), children.next() != nil {
            if document.keyEquals(keyIndex, key) { return true }
        }
        return false
    }

    /// True when `key` is present with the value `null`.
    func isNull(_ key: String) -> Bool {
        guard let index = try? lookup(key, keepNull: true) else { return false }
        return document.nodes[index].kind == .null
    }

    /// Refuses any field that was not read: one written again after a field that was read
    /// ("appears more than once"), else an unknown one (the first in sorted order is named),
    /// with its entry in `reasons` when it has one (a field this request does not take here).
    func finish(reasons: [String: String] = [:]) throws(ProtocolError) {
        var children = document.children(of: node)
        var allRead = true
        while let keyIndex = children.next(), children.next() != nil {
            if document.nodes[keyIndex].flags & JSONDocument.Flag.read == 0 { allRead = false }
        }
        guard !allRead else { return }
        var read: Set<String> = []
        var unread: [String] = []
        children = document.children(of: node)
        while let keyIndex = children.next(), children.next() != nil {
            if document.nodes[keyIndex].flags & JSONDocument.Flag.read != 0 {
                read.insert(document.string(at: keyIndex))
            } else {
                unread.append(document.string(at: keyIndex))
            }
        }
        if let twice = unread.filter(read.contains).min() { throw .invalid(name(twice), "appears more than once") }
        if let extra = unread.min() { throw .invalid(name(extra), reasons[extra] ?? "unknown field") }
    }

    private func missing(_ key: String) -> ProtocolError { .invalid(name(key), "required") }

    private func kind(_ index: Int) -> JSONDocument.Kind { document.nodes[index].kind }

    func string(_ key: String) throws(ProtocolError) -> String {
        guard let s = try optionalString(key) else { throw missing(key) }
        return s
    }

    func optionalString(_ key: String) throws(ProtocolError) -> String? {
        guard let index = try lookup(key) else { return nil }
        guard kind(index) == .string else { throw .invalid(name(key), "must be a string") }
        return document.string(at: index)
    }

    func double(_ key: String) throws(ProtocolError) -> Double {
        guard let d = try optionalDouble(key) else { throw missing(key) }
        return d
    }

    func optionalDouble(_ key: String) throws(ProtocolError) -> Double? {
        guard let index = try lookup(key) else { return nil }
        guard kind(index) == .number else { throw .invalid(name(key), "must be a number") }
        let n = document.double(at: index)
        guard n.isFinite else { throw .invalid(name(key), "must be a finite number") }
        return n
    }

    func optionalInt(_ key: String) throws(ProtocolError) -> Int? {
        guard let n = try optionalDouble(key) else { return nil }
        guard n == n.rounded(), abs(n) <= 9_007_199_254_740_991 else { throw .invalid(name(key), "must be an integer") }
        return Int(n)
    }

    func bool(_ key: String) throws(ProtocolError) -> Bool {
        guard let b = try optionalBool(key) else { throw missing(key) }
        return b
    }

    func optionalBool(_ key: String) throws(ProtocolError) -> Bool? {
        guard let index = try lookup(key) else { return nil }
        switch kind(index) {
        case .trueValue: return true
        case .falseValue: return false
        default: throw .invalid(name(key), "must be true or false")
        }
    }

    func object(_ key: String) throws(ProtocolError) -> Fields {
        guard let f = try optionalObject(key) else { throw missing(key) }
        return f
    }

    func optionalObject(_ key: String) throws(ProtocolError) -> Fields? {
        guard let index = try lookup(key) else { return nil }
        return try Fields(document: document, node: index, path: name(key))
    }

    /// The element nodes of an array field.
    func elements(_ key: String) throws(ProtocolError) -> JSONDocument.Children {
        guard let items = try optionalElements(key) else { throw missing(key) }
        return items
    }

    func optionalElements(_ key: String) throws(ProtocolError) -> JSONDocument.Children? {
        guard let index = try lookup(key) else { return nil }
        guard kind(index) == .array else { throw .invalid(name(key), "must be an array") }
        return document.children(of: index)
    }

    /// An object field as a generic value (free-form metadata).
    func optionalMetadata(_ key: String) throws(ProtocolError) -> [String: JSONValue]? {
        guard let index = try lookup(key) else { return nil }
        guard kind(index) == .object else { throw .invalid(name(key), "must be an object") }
        if let path = document.firstInexactInteger(in: index, path: name(key)) {
            throw .invalid(path, "an integer beyond ±9007199254740991 cannot be kept exactly as a JSON number; send it as a string")
        }
        guard case .object(let o)? = document.value(at: index) else {
            throw .invalid(name(key), "has an object with a field written more than once")
        }
        return o
    }

    func enumeration<E: RawRepresentable>(_ key: String, _ type: E.Type) throws(ProtocolError) -> E where E.RawValue == String, E: CaseIterable {
        guard let e = try optionalEnumeration(key, type) else { throw missing(key) }
        return e
    }

    func optionalEnumeration<E: RawRepresentable>(_ key: String, _: E.Type) throws(ProtocolError) -> E? where E.RawValue == String, E: CaseIterable {
        // A value written without escapes is compared as bytes, without making a String.
        if let index = try lookup(key), kind(index) == .string, document.nodes[index].flags & JSONDocument.Flag.escaped == 0 {
            let text = document.text(of: index)
            let inner = UnsafeRawBufferPointer(rebasing: text[1..<(text.count - 1)])
            for e in E.allCases {
                var raw = e.rawValue
                if raw.withUTF8({ $0.elementsEqual(inner) }) { return e }
            }
        }
        guard let s = try optionalString(key) else { return nil }
        guard let e = E(rawValue: s) else {
            throw .invalid(name(key), "must be one of \(E.allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")), got \"\(s)\"")
        }
        return e
    }

    func optionalColor(_ key: String) throws(ProtocolError) -> Color? {
        guard let s = try optionalString(key) else { return nil }
        guard let c = Color(hex: s) else { throw .invalid(name(key), "must be a colour #rgb, #rrggbb or #rrggbbaa, got \"\(s)\"") }
        return c
    }

    /// For patches: nil when absent, `.some(nil)` when `null` (clear), else the value.
    func clearable<T>(_ key: String, _ read: (String) throws(ProtocolError) -> T?) throws(ProtocolError) -> T?? {
        guard let index = try lookup(key, keepNull: true) else { return nil }
        if kind(index) == .null { return .some(nil) }
        return .some(try read(key))
    }
}
