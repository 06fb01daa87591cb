import Synchronization

/// A value behind a lock: the standard library's `Mutex`, annotated for ThreadSanitizer.
///
/// On Linux TSan does not see `Mutex` (a futex in a library built without TSan), so it takes
/// every access made under one for a race. `Locked` tells TSan about each lock and unlock
/// (``ThreadSanitizerHooks``); in a build without TSan that costs one nil check per call.
/// Every lock in Meridian's sources is a `Locked`.
///
/// A class, so that the lock has a stable address to name it to TSan and can be captured by
/// escaping closures. Sendable whatever `Value` is, like `Mutex`: the value only goes in and
/// comes out `sending`.
public final class Locked<Value: ~Copyable>: Sendable {
    @usableFromInline let mutex: Mutex<Value>

    public init(_ value: consuming sending Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with the value while holding the lock, and returns what it returns.
    @inlinable
    public func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        guard let hooks = threadSanitizerHooks else { return try mutex.withLock(body) }
        let address = Unmanaged.passUnretained(self).toOpaque()
        hooks.preLock(address)
        defer { hooks.postUnlock(address) }
        return try mutex.withLock { (value: inout sending Value) throws(E) -> sending Result in
            hooks.postLock(address)
            defer { hooks.preUnlock(address) }
            return try body(&value)
        }
    }
}
