/// Reads small choices from fuzzer input. Past the end it reads zeros, so
/// every input, however short, is a complete script.
struct ByteReader {
    private let bytes: [UInt8]
    private var index = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { index >= bytes.count }

    mutating func byte() -> UInt8 {
        guard index < bytes.count else { return 0 }
        defer { index += 1 }
        return bytes[index]
    }

    /// A value in `0..<count`.
    mutating func pick(_ count: Int) -> Int { Int(byte()) % count }

    /// One element of a fixed pool.
    mutating func pick<T>(from pool: [T]) -> T { pool[pick(pool.count)] }

    mutating func bool() -> Bool { byte() & 1 == 1 }
}
