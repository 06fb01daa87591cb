#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// C memory that lws keeps pointers to (protocol names, vhost name, interface, retry policy,
/// protocol array). Allocated once before `lws_create_context` and freed only after
/// `lws_context_destroy`, because lws reads it for the whole life of the context.
package final class CAllocations {
    private var blocks: [UnsafeMutableRawPointer] = []

    package init() {}

    /// A zero-terminated copy of `string` that lives until ``freeAll()``.
    package func string(_ string: String) -> UnsafeMutablePointer<CChar> {
        let copy = strdup(string)!
        blocks.append(UnsafeMutableRawPointer(copy))
        return copy
    }

    /// `count` zero-filled values of `T` that live until ``freeAll()``.
    package func zeroed<T>(_ type: T.Type, count: Int = 1) -> UnsafeMutablePointer<T> {
        let raw = calloc(count, MemoryLayout<T>.stride)!
        blocks.append(raw)
        return raw.bindMemory(to: T.self, capacity: count)
    }

    package func freeAll() {
        for block in blocks { free(block) }
        blocks.removeAll()
    }

    deinit { freeAll() }
}
