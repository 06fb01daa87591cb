import Dispatch

/// A locked value that threads can wait on for a change (a condition variable's job): waiting
/// threads park a semaphore each in ``waiters``, and the thread that changes the value takes
/// them under the lock and signals them once it has released it.
public protocol Awaitable {
    /// The semaphores of the threads waiting for the next change.
    var waiters: [DispatchSemaphore] { get set }
}

extension Locked where Value: Awaitable {
    /// Blocks until `done` holds for the value, looking again each time the waiters are woken.
    public func wait(until done: (Value) -> Bool) {
        while true {
            let woken = DispatchSemaphore(value: 0)
            let holds = withLock { value in
                if done(value) { return true }
                value.waiters.append(woken)
                return false
            }
            if holds { return }
            woken.wait()
        }
    }
}
