import MeridianCore

/// A request's `ref` as the client wrote it. Answers echo it byte for byte, so a client
/// gets back exactly what it sent, whatever its number type (an integer beyond 2^53 keeps
/// every digit). Refs of up to 16 bytes (nearly all) are kept inline, without an allocation.
public struct RequestRef: Hashable, Sendable, CustomStringConvertible {
    private enum Storage: Hashable, Sendable {
        case inline(UInt64, UInt64, count: UInt8)
        case heap([UInt8])
    }

    private let storage: Storage

    /// Wraps JSON text; the caller vouches that it is one JSON value.
    public init(json: [UInt8]) {
        self = json.withUnsafeBytes { RequestRef(text: $0) }
    }

    init(text: UnsafeRawBufferPointer) {
        guard text.count <= 16 else {
            storage = .heap(Array(text))
            return
        }
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: text) }
        storage = .inline(words.0, words.1, count: UInt8(text.count))
    }

    /// The JSON text of the ref: a string with its quotes, a number as written, or `null`.
    public var json: [UInt8] { withJSON { Array($0) } }

    /// Calls `body` with the JSON text of the ref.
    public func withJSON<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        switch storage {
        case .heap(let bytes):
            return bytes.withUnsafeBytes(body)
        case .inline(let a, let b, let count):
            var words = (a, b)
            return withUnsafeBytes(of: &words) { body(UnsafeRawBufferPointer(rebasing: $0.prefix(Int(count)))) }
        }
    }

    /// No ref could be read: answers carry `null`.
    public static let null = RequestRef(json: Array("null".utf8))

    /// A ref that is the JSON string `value` (escaped as JSON requires).
    public static func string(_ value: String) -> RequestRef {
        var json: [UInt8] = []
        JSONWriter.writeString(value, into: &json)
        return RequestRef(json: json)
    }

    /// A ref that is the JSON integer `value`.
    public static func integer(_ value: Int) -> RequestRef {
        RequestRef(json: Array(String(value).utf8))
    }

    /// The ref's JSON text: a string with its quotes, a number as written, or `null`.
    public var description: String { withJSON { String(decoding: $0, as: UTF8.self) } }
}

extension JSONOutput {
    /// A request's ref, as the request wrote it.
    public mutating func ref(_ ref: RequestRef) {
        ref.withJSON { text in
            text.withMemoryRebound(to: UInt8.self) { raw($0) }
        }
    }
}
