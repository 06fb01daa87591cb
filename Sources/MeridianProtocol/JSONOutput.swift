import MeridianCore

/// JSON text appended straight to a byte buffer: the encoder of every server message.
///
/// Writers emit keys in a fixed order of their own (SPEC §7: `type` first, then the
/// message's fields as listed; nested objects in alphabetical key order), so no
/// dictionary is built or sorted on the way. The buffer may start with bytes reserved by
/// the caller (room for a WebSocket frame header): writers only append. The buffer is
/// owned by the value (it cannot be copied); ``takeBuffer()`` hands it on without a copy.
public struct JSONOutput: ~Copyable {
    private var buffer: UnsafeMutablePointer<UInt8>
    private var capacity: Int
    /// Bytes written, the reserved prefix included.
    public private(set) var count: Int

    /// An empty output: `prefix` zero bytes reserved at the front for the caller (a frame header), and room for `capacity` more before the buffer grows.
    public init(reserving prefix: Int = 0, capacity: Int = 128) {
        self.capacity = max(prefix + capacity, 16)
        buffer = .allocate(capacity: self.capacity)
        buffer.initialize(repeating: 0, count: prefix)
        count = prefix
    }

    deinit { buffer.deallocate() }

    /// A copy of what was written, the reserved prefix included.
    public var bytes: [UInt8] { Array(UnsafeBufferPointer(start: buffer, count: count)) }

    /// Hands over the buffer (allocated with `UnsafeMutablePointer<UInt8>.allocate`): the
    /// receiver frees it.
    public consuming func takeBuffer() -> (pointer: UnsafeMutablePointer<UInt8>, count: Int) {
        let taken = (buffer, count)
        discard self
        return taken
    }

    @inline(__always)
    private mutating func reserve(_ more: Int) {
        guard count + more > capacity else { return }
        var grown = capacity * 2
        while grown < count + more { grown *= 2 }
        let larger = UnsafeMutablePointer<UInt8>.allocate(capacity: grown)
        larger.initialize(from: buffer, count: count)
        buffer.deallocate()
        buffer = larger
        capacity = grown
    }

    @inline(__always)
    private mutating func append(_ source: UnsafePointer<UInt8>, _ length: Int) {
        reserve(length)
        (buffer + count).update(from: source, count: length)
        count += length
    }

    @inline(__always)
    private mutating func append(_ byte: UInt8) {
        reserve(1)
        buffer[count] = byte
        count += 1
    }

    /// Appends `text` as it is: punctuation and pre-escaped keys such as `,"seq":`.
    @inline(__always)
    public mutating func raw(_ text: StaticString) {
        append(text.utf8Start, text.utf8CodeUnitCount)
    }

    /// Appends `text` as it is: bytes that are already JSON.
    public mutating func raw(_ text: [UInt8]) {
        text.withUnsafeBufferPointer { raw($0) }
    }

    /// Appends the bytes of `text` as they are: bytes that are already JSON.
    public mutating func raw(_ text: UnsafeBufferPointer<UInt8>) {
        if let base = text.baseAddress { append(base, text.count) }
    }

    /// A JSON string: `"` and `\` escaped, control characters as `\n`, `\r`, `\t` or `\u00XX`;
    /// everything else (UTF-8 included) as it is.
    public mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { utf8 in
            reserve(utf8.count + 2)
            append(UInt8(ascii: "\""))
            var runStart = 0
            // An index loop, not `enumerated()`: unoptimized builds pay for the generic iterator
            // on every byte, and strings of tens of kilobytes (metadata) go through here.
            var i = 0
            while i < utf8.count {
                let byte = utf8[i]
                if byte < 0x20 || byte == 0x22 || byte == 0x5C {
                    if i > runStart { append(utf8.baseAddress! + runStart, i - runStart) }
                    runStart = i + 1
                    escape(byte)
                }
                i += 1
            }
            if utf8.count > runStart { append(utf8.baseAddress! + runStart, utf8.count - runStart) }
            append(UInt8(ascii: "\""))
        }
    }

    private mutating func escape(_ byte: UInt8) {
        switch byte {
        case 0x22: raw(#"\""#)
        case 0x5C: raw(#"\\"#)
        case 0x0A: raw(#"\n"#)
        case 0x0D: raw(#"\r"#)
        case 0x09: raw(#"\t"#)
        default:
            let hex: StaticString = "0123456789abcdef"
            raw(#"\u00"#)
            append(hex.utf8Start[Int(byte >> 4)])
            append(hex.utf8Start[Int(byte & 15)])
        }
    }

    /// A string, or `null`.
    public mutating func string(orNull s: String?) {
        if let s { string(s) } else { raw("null") }
    }

    /// `true` or `false`.
    public mutating func bool(_ b: Bool) {
        if b { raw("true") } else { raw("false") }
    }

    /// Integral values below 2^53 in magnitude as integers; others in the shortest form that
    /// reads back as the same double (plain decimals from 1e-4 to 1e15, Swift's shortest
    /// round-trip text otherwise); non-finite numbers (never valid in state) as `null`.
    public mutating func number(_ n: Double) {
        guard n.isFinite else { return raw("null") }
        let magnitude = n.magnitude
        if n == n.rounded(.towardZero) && magnitude < 9_007_199_254_740_992 { return integer(Int(n)) }
        if magnitude >= 1e-4 && magnitude < 1e15, let (digits, fraction) = Self.shortestDecimal(magnitude) {
            if n < 0 { append(UInt8(ascii: "-")) }
            return decimal(digits, fractionDigits: fraction)
        }
        // Swift writes 2^53 itself as "9007199254740992.0": an integer with a fraction.
        if magnitude == 9_007_199_254_740_992 { return n < 0 ? raw("-9.007199254740992e+15") : raw("9.007199254740992e+15") }
        var text = n.description
        text.withUTF8 { append($0.baseAddress!, $0.count) }
    }

    /// The fewest fraction digits `k` (with their digits `m`: the value is m / 10^k) that read
    /// back as exactly `magnitude`, when `m` stays below 2^53 (so both m and 10^k are exact
    /// doubles and the division that checks it rounds once); nil past that.
    private static func shortestDecimal(_ magnitude: Double) -> (UInt64, Int)? {
        var scale = 1.0
        for k in 1...17 {
            scale *= 10
            let m = (magnitude * scale).rounded()
            guard m < 9_007_199_254_740_992 else { return nil }
            if m / scale == magnitude { return (UInt64(m), k) }
        }
        return nil
    }

    /// `digits` with a decimal point `fractionDigits` from the right (`0.` and zeros first when
    /// it has fewer digits).
    private mutating func decimal(_ digits: UInt64, fractionDigits: Int) {
        var text: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits
        var length = 0
        withUnsafeMutableBytes(of: &text) { buffer in
            var rest = digits
            while rest > 0 || length == 0 {
                length += 1
                buffer[24 - length] = UInt8(truncatingIfNeeded: rest % 10) + 0x30
                rest /= 10
            }
            let start = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) + 24 - length
            if length <= fractionDigits {
                raw("0.")
                for _ in 0..<(fractionDigits - length) { append(0x30) }
                append(start, length)
            } else {
                append(start, length - fractionDigits)
                append(UInt8(ascii: "."))
                append(start + length - fractionDigits, fractionDigits)
            }
        }
    }

    /// An integer in decimal, with a leading `-` when negative.
    public mutating func integer(_ n: Int) {
        if n < 0 {
            append(UInt8(ascii: "-"))
            unsigned(UInt64(n.magnitude))
        } else {
            unsigned(UInt64(n))
        }
    }

    /// An unsigned integer in decimal.
    public mutating func integer(_ n: UInt64) { unsigned(n) }

    private mutating func unsigned(_ n: UInt64) {
        guard n >= 10 else { return append(UInt8(truncatingIfNeeded: n) + 0x30) }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits
        withUnsafeMutableBytes(of: &digits) { buffer in
            var length = 0
            var rest = n
            while rest > 0 {
                length += 1
                buffer[24 - length] = UInt8(truncatingIfNeeded: rest % 10) + 0x30
                rest /= 10
            }
            append(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self) + 24 - length, length)
        }
    }

    /// A generic value (metadata), objects with their keys sorted.
    public mutating func value(_ v: JSONValue) {
        switch v {
        case .null: raw("null")
        case .bool(let b): bool(b)
        case .number(let n): number(n)
        case .string(let s): string(s)
        case .array(let items):
            append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { append(UInt8(ascii: ",")) }
                value(item)
            }
            append(UInt8(ascii: "]"))
        case .object(let fields):
            append(UInt8(ascii: "{"))
            for (i, key) in fields.keys.sorted().enumerated() {
                if i > 0 { append(UInt8(ascii: ",")) }
                string(key)
                append(UInt8(ascii: ":"))
                value(fields[key]!)
            }
            append(UInt8(ascii: "}"))
        }
    }
}
