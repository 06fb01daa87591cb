/// Whole messages a connection sent that wait for their turn (``InputScheduler``), oldest
/// first, in one buffer: each message is its length (4 bytes) and its bytes.
struct Inbox {
    private var storage: [UInt8] = []
    private var start = 0
    /// Messages waiting.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }
    /// Bytes of the messages waiting (their lengths not counted).
    private(set) var bytes = 0

    mutating func append(_ message: UnsafeRawBufferPointer) {
        var length = UInt32(message.count).littleEndian
        withUnsafeBytes(of: &length) { storage.append(contentsOf: $0) }
        storage.append(contentsOf: message)
        count += 1
        bytes += message.count
    }

    /// Calls `body` with the oldest message, valid during the call only; nil when empty.
    func withFirst<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R? {
        guard count > 0 else { return nil }
        return storage.withUnsafeBytes { all in
            let length = Int(UInt32(littleEndian: all.loadUnaligned(fromByteOffset: start, as: UInt32.self)))
            return body(UnsafeRawBufferPointer(rebasing: all[(start + 4)..<(start + 4 + length)]))
        }
    }

    /// The size of the oldest message (0 when empty).
    var firstSize: Int {
        guard count > 0 else { return 0 }
        return storage.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: start, as: UInt32.self))) }
    }

    mutating func removeFirst() {
        let length = firstSize
        guard count > 0 else { return }
        start += 4 + length
        count -= 1
        bytes -= length
        if count == 0 {
            // A large buffer is not kept: an idle connection should cost little.
            if storage.capacity > 64 * 1024 { storage = [] } else { storage.removeAll(keepingCapacity: true) }
            start = 0
        } else if start > 16 * 1024 && start * 2 > storage.count {
            storage.removeFirst(start)
            start = 0
        }
    }

    mutating func removeAll() {
        storage = []
        start = 0
        count = 0
        bytes = 0
    }
}
