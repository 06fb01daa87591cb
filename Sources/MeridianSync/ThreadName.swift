#if canImport(Darwin)
import Darwin
#elseif canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Names the calling thread for the kernel: what `top -H`, `ps -L` and `/proc/…/comm` show.
/// The kernel keeps 15 bytes of it. Foundation's `Thread.name` does not reach it on Linux.
///
/// `pthread_setname_np` is a GNU extension that Swift's Glibc module does not declare, so it is
/// found at run time, as ``ThreadSanitizerHooks`` finds its functions; without it the thread
/// keeps the process's name.
func nameCurrentThread(_ name: String) {
    let kernelName = String(decoding: name.utf8.prefix(15), as: UTF8.self)
    #if canImport(Darwin)
    _ = pthread_setname_np(kernelName)
    #else
    typealias SetName = @convention(c) (pthread_t, UnsafePointer<CChar>) -> Int32
    guard let address = dlsym(nil, "pthread_setname_np") else { return }  // nil: RTLD_DEFAULT
    _ = unsafeBitCast(address, to: SetName.self)(pthread_self(), kernelName)
    #endif
}
