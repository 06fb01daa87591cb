/// Incremental UTF-8 validation (RFC 3629): the bytes of one text may arrive in any number of
/// pieces, and a character split between pieces is valid. Refuses overlong forms, surrogates
/// (U+D800…U+DFFF) and anything above U+10FFFF at the first byte that makes the text invalid.
struct UTF8Validator {
    /// Continuation bytes still expected for the current character.
    private var pending: UInt8 = 0
    /// Range of the next continuation byte: narrower right after E0, ED, F0 and F4.
    private var low: UInt8 = 0x80
    private var high: UInt8 = 0xBF

    /// True between characters: the text so far is complete UTF-8.
    var isAtBoundary: Bool { pending == 0 }

    mutating func reset() {
        pending = 0
        low = 0x80
        high = 0xBF
    }

    /// Takes the next piece; false once the text cannot be valid UTF-8, whatever follows.
    mutating func consume(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        var i = 0
        while i < count {
            if pending == 0 {
                // Requests are mostly ASCII: skip it eight bytes at a time.
                while i + 8 <= count, bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                    i += 8
                }
                guard i < count else { return true }
                let byte = bytes[i]
                i += 1
                switch byte {
                case 0x00...0x7F: continue
                case 0xC2...0xDF: expect(1)
                case 0xE0: expect(2, low: 0xA0)
                case 0xE1...0xEC, 0xEE...0xEF: expect(2)
                case 0xED: expect(2, high: 0x9F)
                case 0xF0: expect(3, low: 0x90)
                case 0xF1...0xF3: expect(3)
                case 0xF4: expect(3, high: 0x8F)
                default: return false
                }
            } else {
                let byte = bytes[i]
                i += 1
                guard byte >= low, byte <= high else { return false }
                pending -= 1
                low = 0x80
                high = 0xBF
            }
        }
        return true
    }

    private mutating func expect(_ continuations: UInt8, low: UInt8 = 0x80, high: UInt8 = 0xBF) {
        pending = continuations
        self.low = low
        self.high = high
    }
}

extension UTF8Validator {
    /// Whether `bytes` are complete, valid UTF-8.
    static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var validator = UTF8Validator()
        return validator.consume(bytes) && validator.isAtBoundary
    }
}
