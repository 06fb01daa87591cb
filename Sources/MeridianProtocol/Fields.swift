import MeridianCore

/// Reads the fields of one JSON object, naming each by its dotted path in
/// errors, and refuses fields it was never asked for.
final class Fields {
    let path: String
    private let object: [String: JSONValue]
    private var read: Set<String> = []

    init(_ value: JSONValue, path: String) throws(ProtocolError) {
        guard case .object(let o) = value else { throw .invalid(path.isEmpty ? "message" : path, "must be an object") }
        self.object = o
        self.path = path
    }

    func name(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// The raw value; nil when absent. `null` counts as absent unless `keepNull`.
    func value(_ key: String, keepNull: Bool = false) -> JSONValue? {
        read.insert(key)
        guard let v = object[key] else { return nil }
        if case .null = v, !keepNull { return nil }
        return v
    }

    func has(_ key: String) -> Bool { object[key] != nil }

    /// Refuses any field that was not read.
    func finish() throws(ProtocolError) {
        if let extra = object.keys.filter({ !read.contains($0) }).sorted().first {
            throw .invalid(name(extra), "unknown field")
        }
    }

    private func missing(_ key: String) -> ProtocolError { .invalid(name(key), "required") }

    func string(_ key: String) throws(ProtocolError) -> String {
        guard let s = try optionalString(key) else { throw missing(key) }
        return s
    }

    func optionalString(_ key: String) throws(ProtocolError) -> String? {
        guard let v = value(key) else { return nil }
        guard case .string(let s) = v else { throw .invalid(name(key), "must be a string") }
        return s
    }

    func double(_ key: String) throws(ProtocolError) -> Double {
        guard let d = try optionalDouble(key) else { throw missing(key) }
        return d
    }

    func optionalDouble(_ key: String) throws(ProtocolError) -> Double? {
        guard let v = value(key) else { return nil }
        guard case .number(let n) = v else { throw .invalid(name(key), "must be a number") }
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
        guard let v = value(key) else { return nil }
        guard case .bool(let b) = v else { throw .invalid(name(key), "must be true or false") }
        return b
    }

    func object(_ key: String) throws(ProtocolError) -> Fields {
        guard let f = try optionalObject(key) else { throw missing(key) }
        return f
    }

    func optionalObject(_ key: String) throws(ProtocolError) -> Fields? {
        guard let v = value(key) else { return nil }
        return try Fields(v, path: name(key))
    }

    func array(_ key: String) throws(ProtocolError) -> [JSONValue] {
        guard let a = try optionalArray(key) else { throw missing(key) }
        return a
    }

    func optionalArray(_ key: String) throws(ProtocolError) -> [JSONValue]? {
        guard let v = value(key) else { return nil }
        guard case .array(let a) = v else { throw .invalid(name(key), "must be an array") }
        return a
    }

    func enumeration<E: RawRepresentable>(_ key: String, _ type: E.Type) throws(ProtocolError) -> E where E.RawValue == String, E: CaseIterable {
        guard let e = try optionalEnumeration(key, type) else { throw missing(key) }
        return e
    }

    func optionalEnumeration<E: RawRepresentable>(_ key: String, _: E.Type) throws(ProtocolError) -> E? where E.RawValue == String, E: CaseIterable {
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
        guard let v = value(key, keepNull: true) else { return nil }
        if case .null = v { return .some(nil) }
        return .some(try read(key))
    }
}
