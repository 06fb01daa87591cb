#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A growable byte buffer with `LWS_PRE` bytes of headroom, for one connection's writes.
/// Its contents must stay untouched between an `lws_write` and the connection's next WRITEABLE.
package struct WriteBuffer {
    package let headroom: Int
    package private(set) var base: UnsafeMutableRawPointer?
    package private(set) var capacity = 0

    package init(headroom: Int) { self.headroom = headroom }

    /// Pointer to the payload area (after the headroom).
    package var payload: UnsafeMutableRawPointer { base! + headroom }

    /// Makes room for at least `needed` payload bytes. Only call from WRITEABLE (or before the first write).
    package mutating func reserve(_ needed: Int) {
        guard needed > capacity else { return }
        var newCapacity = max(capacity, 4096)
        while newCapacity < needed { newCapacity *= 2 }
        free(base)
        base = malloc(headroom + newCapacity)
        capacity = newCapacity
    }

    /// Shrinks back to nothing after an oversized write (call only from WRITEABLE).
    package mutating func shrink(ifAbove limit: Int) {
        guard capacity > limit else { return }
        release()
    }

    package mutating func release() {
        free(base)
        base = nil
        capacity = 0
    }
}
