import MeridianCore

/// A request's `ref` as the client wrote it. Answers echo it byte for byte, so a client
/// gets back exactly what it sent, whatever its number type (an integer beyond 2^53 keeps
/// every digit).
public struct RequestRef: Hashable, Sendable, CustomStringConvertible {
    /// The JSON text of the ref: a string with its quotes, a number as written, or `null`.
    public let json: [UInt8]

    /// Wraps JSON text; the caller vouches that it is one JSON value.
    public init(json: [UInt8]) {
        self.json = json
    }

    /// No ref could be read: answers carry `null`.
    public static let null = RequestRef(json: Array("null".utf8))

    public static func string(_ value: String) -> RequestRef {
        var json: [UInt8] = []
        JSONWriter.writeString(value, into: &json)
        return RequestRef(json: json)
    }

    public static func integer(_ value: Int) -> RequestRef {
        RequestRef(json: Array(String(value).utf8))
    }

    public var description: String { String(decoding: json, as: UTF8.self) }
}
