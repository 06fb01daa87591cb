#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CLibWebSockets

/// A repeating lws timer (a sorted-usec-list entry) on the service thread. Each firing calls
/// `body`, and schedules the next one while `body` returns true. Confined to the service
/// thread, created after the context and cancelled before `lws_context_destroy`.
final class TickTimer {
    private let context: OpaquePointer
    private let interval: lws_usec_t
    private let body: () -> Bool
    /// C memory, since lws links the entry into its own lists; its `user` points back here.
    private let timer: UnsafeMutablePointer<mrd_timer>

    init(context: OpaquePointer, interval: Duration, body: @escaping () -> Bool) {
        self.context = context
        self.interval = lws_usec_t(interval.microseconds)
        self.body = body
        timer = calloc(1, MemoryLayout<mrd_timer>.stride)!.bindMemory(to: mrd_timer.self, capacity: 1)
        timer.pointee.user = Unmanaged.passUnretained(self).toOpaque()
    }

    deinit { free(timer) }

    func schedule() {
        mrd_timer_schedule(context, timer, tickTimerFired, interval)
    }

    func cancel() {
        mrd_timer_cancel(timer)
    }

    fileprivate func fire() {
        if body() { schedule() }
    }
}

/// The lws timer callback: recovers the ``TickTimer`` (kept alive by the service thread until cancelled).
private func tickTimerFired(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let sul, let user = mrd_timer_from_sul(sul)?.pointee.user else { return }
    Unmanaged<TickTimer>.fromOpaque(user).takeUnretainedValue().fire()
}
