/// A JSON value, used for free-form annotation metadata and by the wire codec.
///
/// Objects keep their keys sorted when written, so the same value always
/// encodes to the same bytes.
public enum JSONValue: Hashable, Sendable {
    /// JSON `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, held as a `Double`; a non-finite one is written as `null`.
    case number(Double)
    /// A string of Unicode text.
    case string(String)
    /// An ordered list of values.
    case array([JSONValue])
    /// Named values; keys are written in sorted order.
    case object([String: JSONValue])
}

extension JSONValue {
    /// The value as compact JSON text (UTF-8).
    public var encoded: [UInt8] {
        var out: [UInt8] = []
        JSONWriter.write(self, into: &out)
        return out
    }

    /// True when every number inside is finite.
    public var isFinite: Bool {
        switch self {
        case .number(let n): return n.isFinite
        case .array(let a): return a.allSatisfy(\.isFinite)
        case .object(let o): return o.values.allSatisfy(\.isFinite)
        default: return true
        }
    }
}

/// Appends compact JSON text to a byte buffer. Shared by the core (to size
/// metadata) and the wire codec (to encode every outgoing message).
public enum JSONWriter {
    /// Appends `value` to `out` as compact JSON text: no whitespace, object keys sorted.
    public static func write(_ value: JSONValue, into out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): writeNumber(n, into: &out)
        case .string(let s): writeString(s, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(item, into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let fields):
            out.append(UInt8(ascii: "{"))
            for (i, key) in fields.keys.sorted().enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                write(fields[key]!, into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Integral values within ±2^53 are written without a fraction; others in
    /// Swift's shortest round-trip form. Non-finite numbers (never valid in
    /// state) are written as null.
    public static func writeNumber(_ n: Double, into out: inout [UInt8]) {
        guard n.isFinite else { out.append(contentsOf: "null".utf8); return }
        if n == n.rounded(), abs(n) < 9_007_199_254_740_992 {
            out.append(contentsOf: String(Int64(n)).utf8)
        } else if abs(n) == 9_007_199_254_740_992 {
            // Swift writes 2^53 itself as "9007199254740992.0": an integer with a fraction.
            out.append(contentsOf: (n < 0 ? "-9.007199254740992e+15" : "9.007199254740992e+15").utf8)
        } else {
            out.append(contentsOf: "\(n)".utf8)
        }
    }

    /// A JSON string: `"` and `\` escaped, control characters as `\n`, `\r`, `\t` or
    /// `\u00XX`; everything else (UTF-8 included) as it is.
    public static func writeString(_ s: String, into out: inout [UInt8]) {
        var s = s
        s.withUTF8 { utf8 in
            out.append(UInt8(ascii: "\""))
            var runStart = 0
            // An index loop, not `enumerated()`: unoptimized builds pay for the generic iterator
            // on every byte, and strings of tens of kilobytes (metadata) go through here.
            var i = 0
            while i < utf8.count {
                let byte = utf8[i]
                i += 1
                guard byte < 0x20 || byte == 0x22 || byte == 0x5C else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<(i - 1)]))
                runStart = i
                switch byte {
                case 0x22: out.append(contentsOf: [92, 34])
                case 0x5C: out.append(contentsOf: [92, 92])
                case 0x0A: out.append(contentsOf: [92, UInt8(ascii: "n")])
                case 0x0D: out.append(contentsOf: [92, UInt8(ascii: "r")])
                case 0x09: out.append(contentsOf: [92, UInt8(ascii: "t")])
                default:
                    let hex: StaticString = "0123456789abcdef"
                    out.append(contentsOf: [92, UInt8(ascii: "u"), 48, 48, hex.utf8Start[Int(byte >> 4)], hex.utf8Start[Int(byte & 15)]])
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
            out.append(UInt8(ascii: "\""))
        }
    }
}
