#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// C memory that lws keeps pointers to (protocol names, vhost name, interface, retry policy,
/// protocol array). Allocated once before `lws_create_context` and freed only after
/// `lws_context_destroy`, because lws reads it for the whole life of the context.
final class CAllocations {
    private var blocks: [UnsafeMutableRawPointer] = []

    /// A zero-terminated copy of `string` that lives until ``freeAll()``.
    func string(_ string: String) -> UnsafeMutablePointer<CChar> {
        let copy = strdup(string)!
        blocks.append(UnsafeMutableRawPointer(copy))
        return copy
    }

    /// `count` zero-filled values of `T` that live until ``freeAll()``.
    func zeroed<T>(_ type: T.Type, count: Int = 1) -> UnsafeMutablePointer<T> {
        let raw = calloc(count, MemoryLayout<T>.stride)!
        blocks.append(raw)
        return raw.bindMemory(to: T.self, capacity: count)
    }

    func freeAll() {
        for block in blocks { free(block) }
        blocks.removeAll()
    }

    deinit { freeAll() }
}

/// A growable byte buffer with `LWS_PRE` bytes of headroom, for one connection's writes.
/// Its contents must stay untouched between an `lws_write` and the connection's next WRITEABLE.
struct WriteBuffer {
    let headroom: Int
    private(set) var base: UnsafeMutableRawPointer?
    private(set) var capacity = 0

    init(headroom: Int) { self.headroom = headroom }

    /// Pointer to the payload area (after the headroom).
    var payload: UnsafeMutableRawPointer { base! + headroom }

    /// Makes room for at least `needed` payload bytes. Only call from WRITEABLE (or before the first write).
    mutating func reserve(_ needed: Int) {
        guard needed > capacity else { return }
        var newCapacity = max(capacity, 4096)
        while newCapacity < needed { newCapacity *= 2 }
        free(base)
        base = malloc(headroom + newCapacity)
        capacity = newCapacity
    }

    /// Shrinks back to nothing after an oversized write (call only from WRITEABLE).
    mutating func shrink(ifAbove limit: Int) {
        guard capacity > limit else { return }
        release()
    }

    mutating func release() {
        free(base)
        base = nil
        capacity = 0
    }
}
