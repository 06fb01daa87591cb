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
    func offset(after key: Needle) -> Int? {
        let needle = key.text
        guard let base = bytes.baseAddress, bytes.count >= needle.utf8CodeUnitCount else { return nil }
        let n = needle.utf8CodeUnitCount
        // memchr for the needle's least common byte (JSON is mostly quotes and punctuation),
        // then compare the whole needle around it (memmem is not exported to Swift).
        let k = key.pivot
        let pivot = Int32(needle.utf8Start[k])
        var from = k
        while from <= bytes.count - n + k {
            guard let hit = memchr(base + from, pivot, bytes.count - n + k - from + 1) else { return nil }
            let at = base.distance(to: UnsafeRawPointer(hit)) - k
            if memcmp(base + at, needle.utf8Start, n) == 0 { return at + n }
            from = at + k + 1
        }
        return nil
    }

    func contains(_ needle: Needle) -> Bool { offset(after: needle) != nil }

    /// The message type's first byte after `{"type":"` and whether it starts with `prefix`.
    func typeIs(_ prefix: StaticString) -> Bool {
        let head = 9  // {"type":"
        let n = prefix.utf8CodeUnitCount
        guard bytes.count >= head + n + 1, let base = bytes.baseAddress else { return false }
        return memcmp(base + head, prefix.utf8Start, n) == 0 && bytes[head + n] == UInt8(ascii: "\"")
    }

    /// A non-negative integer after `key` (e.g. `"seq":`).
    func integer(after key: Needle) -> UInt64? {
        offset(after: key).flatMap(integer(at:))
    }

    /// The non-negative integer after every occurrence of `key`, in order.
    func forEachInteger(after key: Needle, _ body: (UInt64) -> Void) {
        var start = 0
        while start < bytes.count {
            let rest = FrameScanner(bytes: UnsafeRawBufferPointer(rebasing: bytes[start...]))
            guard let i = rest.offset(after: key) else { return }
            if let value = rest.integer(at: i) { body(value) }
            start += i
        }
    }

    /// The non-negative integer whose digits begin at byte `start`.
    private func integer(at start: Int) -> UInt64? {
        var i = start
        var value: UInt64 = 0
        var digits = 0
        while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 {
            value = value * 10 + UInt64(bytes[i] - 48)
            i += 1
            digits += 1
        }
        return digits > 0 ? value : nil
    }

    /// A string value after `key` (no escapes expected: codes, ids).
    func string(after key: Needle) -> String? {
        guard let start = offset(after: key) else { return nil }
        var i = start
        while i < bytes.count, bytes[i] != UInt8(ascii: "\"") { i += 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<i]), as: UTF8.self)
    }
}

/// A key the scanner looks for, with the byte it searches by worked out once.
struct Needle {
    let text: StaticString
    /// The index of the byte of `text` least likely in a server message.
    let pivot: Int

    init(_ text: StaticString) {
        self.text = text
        pivot = Self.rarest(text)
    }

    static let seq = Needle(#""seq":"#)
    static let ref = Needle(#""ref":"#)
    static let code = Needle(#""code":""#)
    static let transient = Needle(#""transient":true"#)
    /// The number n of a seeded annotation (titled `seed n`).
    static let seedTitle = Needle(#""title":"seed "#)

    /// The index of the byte of `needle` least likely in a server message.
    private static func rarest(_ needle: StaticString) -> Int {
        var best = 0, bestRank = UInt8.max
        for i in 0..<needle.utf8CodeUnitCount {
            let rank = rarity[Int(needle.utf8Start[i])]
            if rank < bestRank { best = i; bestRank = rank }
        }
        return best
    }

    /// Letters by rising frequency in the protocol's keys and values; anything else is common.
    private static let rarity: [UInt8] = {
        var table = [UInt8](repeating: .max, count: 256)
        for (rank, letter) in "qjzxkvwybgfpmhucdlsnritoae".utf8.enumerated() { table[Int(letter)] = UInt8(rank) }
        return table
    }()

}
