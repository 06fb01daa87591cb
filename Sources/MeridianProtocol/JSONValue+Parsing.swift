import MeridianCore

extension JSONValue {
    /// Parses one JSON document strictly (RFC 8259): non-standard literals (NaN, Infinity),
    /// trailing garbage, invalid UTF-8 and objects with a key written twice are refused.
    public static func parse(_ bytes: [UInt8]) -> JSONValue? {
        bytes.withUnsafeBytes { parse($0) }
    }

    /// Parses one JSON document, as strictly, from bytes that need to stay valid only during the call; nil when they are not one.
    public static func parse(_ bytes: UnsafeRawBufferPointer) -> JSONValue? {
        guard case .success(let document) = JSONDocument.parse(bytes) else { return nil }
        return document.value(at: 0)
    }
}
