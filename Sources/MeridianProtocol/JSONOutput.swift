import MeridianCore

/// JSON text appended straight to a byte buffer: the encoder of every server message.
///
/// Writers emit keys in a fixed order of their own (SPEC §7: `type` first, then the
/// message's fields as listed; nested objects in alphabetical key order), so no
/// dictionary is built or sorted on the way. The buffer may start with bytes reserved by
/// the caller (room for a WebSocket frame header): writers only append.
public struct JSONOutput {
    public var bytes: [UInt8]

    public init(reserving prefix: Int = 0, capacity: Int = 128) {
        bytes = [UInt8](repeating: 0, count: prefix)
        bytes.reserveCapacity(prefix + capacity)
    }

    /// Appends `text` as it is: punctuation and pre-escaped keys such as `,"seq":`.
    @inline(__always)
    public mutating func raw(_ text: StaticString) {
        bytes.append(contentsOf: UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    public mutating func raw(_ text: [UInt8]) { bytes.append(contentsOf: text) }

    mutating func string(_ s: String) { JSONWriter.writeString(s, into: &bytes) }

    /// A string, or `null`.
    mutating func string(orNull s: String?) {
        if let s { string(s) } else { raw("null") }
    }

    mutating func bool(_ b: Bool) {
        if b { raw("true") } else { raw("false") }
    }

    mutating func number(_ n: Double) { JSONWriter.writeNumber(n, into: &bytes) }

    mutating func integer(_ n: Int) {
        if n < 0 {
            bytes.append(UInt8(ascii: "-"))
            unsigned(n.magnitude)
        } else {
            unsigned(UInt(n))
        }
    }

    mutating func integer(_ n: UInt64) { unsigned(UInt(n)) }

    private mutating func unsigned(_ n: UInt) {
        guard n >= 10 else {
            bytes.append(UInt8(truncatingIfNeeded: n) + 0x30)
            return
        }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits
        var count = 0
        var rest = n
        withUnsafeMutableBytes(of: &digits) { buffer in
            while rest > 0 {
                count += 1
                buffer[24 - count] = UInt8(truncatingIfNeeded: rest % 10) + 0x30
                rest /= 10
            }
            bytes.append(contentsOf: buffer[(24 - count)...])
        }
    }

    mutating func value(_ v: JSONValue) { JSONWriter.write(v, into: &bytes) }
}
