#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads the few fields the load generator needs straight from a server message's bytes,
/// without a JSON parser: the server writes `{"type":"…"` first and top-level fields before
/// nested ones, so the first occurrence of a key is the top-level one.
struct FrameScanner {
    let bytes: UnsafeRawBufferPointer

    /// The bytes after `needle`'s first occurrence, or nil.
    func offset(after needle: StaticString) -> Int? {
        guard let base = bytes.baseAddress, bytes.count >= needle.utf8CodeUnitCount else { return nil }
        let n = needle.utf8CodeUnitCount
        let first = Int32(needle.utf8Start.pointee)
        var from = 0
        // memchr for the first byte, then compare the rest (memmem is not exported to Swift).
        while from <= bytes.count - n {
            guard let hit = memchr(base + from, first, bytes.count - n - from + 1) else { return nil }
            let at = base.distance(to: UnsafeRawPointer(hit))
            if memcmp(base + at, needle.utf8Start, n) == 0 { return at + n }
            from = at + 1
        }
        return nil
    }

    func contains(_ needle: StaticString) -> Bool { offset(after: needle) != nil }

    /// The message type's first byte after `{"type":"` and whether it starts with `prefix`.
    func typeIs(_ prefix: StaticString) -> Bool {
        let head = 9  // {"type":"
        let n = prefix.utf8CodeUnitCount
        guard bytes.count >= head + n + 1, let base = bytes.baseAddress else { return false }
        return memcmp(base + head, prefix.utf8Start, n) == 0 && bytes[head + n] == UInt8(ascii: "\"")
    }

    /// A non-negative integer after `key` (e.g. `"seq":`).
    func integer(after key: StaticString) -> UInt64? {
        guard var i = offset(after: key) else { return nil }
        var value: UInt64 = 0
        var digits = 0
        while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 {
            value = value * 10 + UInt64(bytes[i] - 48)
            i += 1
            digits += 1
        }
        return digits > 0 ? value : nil
    }

    /// A number after `key`, read with strtod.
    func double(after key: StaticString) -> Double? {
        guard let i = offset(after: key), i < bytes.count, let base = bytes.baseAddress else { return nil }
        // The number ends at ',' or '}' well inside the message, so strtod stops in bounds.
        let start = (base + i).assumingMemoryBound(to: CChar.self)
        var end: UnsafeMutablePointer<CChar>?
        let value = strtod(start, &end)
        guard let end, UnsafeRawPointer(end) > UnsafeRawPointer(start) else { return nil }
        return value
    }

    /// A string value after `key` (no escapes expected: codes, ids).
    func string(after key: StaticString) -> String? {
        guard let start = offset(after: key) else { return nil }
        var i = start
        while i < bytes.count, bytes[i] != UInt8(ascii: "\"") { i += 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
    }
}
