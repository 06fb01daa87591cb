#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// ThreadSanitizer's annotations for a lock it cannot see (compiler-rt's
/// `sanitizer/tsan_interface.h`), found at run time: the TSan runtime is in the process only in
/// a `--sanitize=thread` build, so elsewhere ``threadSanitizerHooks`` is nil and no build flag
/// is needed.
///
/// Each lock is named by an address. `preLock`/`postLock` go around taking it, and
/// `preUnlock`/`postUnlock` around giving it back: TSan then orders what was done under the
/// lock, ignores the lock's own memory accesses, and reports the locks held in a race and any
/// lock-order inversion.
@usableFromInline
struct ThreadSanitizerHooks: Sendable {
    private typealias Annotation = @convention(c) (UnsafeMutableRawPointer?, UInt32) -> Void
    private typealias PostLock = @convention(c) (UnsafeMutableRawPointer?, UInt32, Int32) -> Void
    private typealias PreUnlock = @convention(c) (UnsafeMutableRawPointer?, UInt32) -> Int32

    private let mutexPreLock: Annotation
    private let mutexPostLock: PostLock
    private let mutexPreUnlock: PreUnlock
    private let mutexPostUnlock: Annotation

    /// The annotations of the TSan runtime in this process, or nil if there is none.
    static func resolve() -> ThreadSanitizerHooks? {
        guard
            let preLock = symbol("__tsan_mutex_pre_lock", as: Annotation.self),
            let postLock = symbol("__tsan_mutex_post_lock", as: PostLock.self),
            let preUnlock = symbol("__tsan_mutex_pre_unlock", as: PreUnlock.self),
            let postUnlock = symbol("__tsan_mutex_post_unlock", as: Annotation.self)
        else { return nil }
        return ThreadSanitizerHooks(
            mutexPreLock: preLock, mutexPostLock: postLock, mutexPreUnlock: preUnlock, mutexPostUnlock: postUnlock
        )
    }

    // Flags 0: an ordinary exclusive lock, taken by blocking; a lock count of 0 means one.
    @usableFromInline func preLock(_ lock: UnsafeMutableRawPointer) { mutexPreLock(lock, 0) }
    @usableFromInline func postLock(_ lock: UnsafeMutableRawPointer) { mutexPostLock(lock, 0, 0) }
    @usableFromInline func preUnlock(_ lock: UnsafeMutableRawPointer) { _ = mutexPreUnlock(lock, 0) }
    @usableFromInline func postUnlock(_ lock: UnsafeMutableRawPointer) { mutexPostUnlock(lock, 0) }

    private static func symbol<Function>(_ name: String, as type: Function.Type) -> Function? {
        #if canImport(Darwin)
        let everywhere = UnsafeMutableRawPointer(bitPattern: -2)  // RTLD_DEFAULT
        #else
        let everywhere: UnsafeMutableRawPointer? = nil  // RTLD_DEFAULT
        #endif
        guard let address = dlsym(everywhere, name) else { return nil }
        return unsafeBitCast(address, to: type)
    }
}

/// The TSan runtime's annotations, resolved once; nil in a build without TSan.
@usableFromInline let threadSanitizerHooks = ThreadSanitizerHooks.resolve()
