import Dispatch
import Foundation
import MeridianSync
import Synchronization
internal import CLibWebSockets

/// The one thread that runs a libwebsockets context, and the only ways other threads reach it.
///
/// libwebsockets is single-threaded: the context is created, serviced and destroyed on this
/// thread, and `lws_cancel_service` is the only lws call made from elsewhere. The thread runs
/// a ``ServiceLoop`` (the server, a client, a client group), which is confined to it.
///
/// Other threads may call ``start(_:)``, ``stop()``, ``stop(by:)``, ``execute(_:)``,
/// ``requestExit()`` and ``isCurrent``. Work handed to ``execute(_:)`` is queued under a
/// mutex and the loop is woken with `lws_cancel_service`; the loop runs it, in order, between
/// two `lws_service` passes, with the loop as its argument: this is how the rest of the program
/// reaches loop-confined state.
///
/// Lifecycle: idle → starting (``start(_:)`` waits while the set-up creates the context on the
/// thread) → running → stopping (``stop()``) → ended. A set-up that fails ends the thread at
/// once and ``start(_:)`` throws its error. Once ended, a service thread cannot be started again.
package final class ServiceThread<Loop: ServiceLoop>: Sendable {
    private enum Phase {
        case idle
        case starting
        case running
        case stopping
        case ended
    }

    /// What other threads share with the service thread.
    private struct Shared {
        var phase = Phase.idle
        /// Work waiting to run on the service thread, in order.
        var work: [Work] = []
        /// Non-nil exactly while other threads may wake the context: set once the context
        /// exists, cleared before it is destroyed, both under the mutex.
        var wakeable: WakeHandle?
    }

    /// Work for the service thread: it gets the loop there. `@Sendable` because it is made
    /// on another thread; what it captures crosses threads with it.
    package typealias Work = @Sendable (Loop) -> Void

    private let shared = Locked(Shared())
    /// Set by ``requestExit()``: the loop ends after the work it is draining.
    private let exitRequested = Atomic<Bool>(false)
    /// The running thread's id (0 when none), for ``isCurrent``.
    private let threadID = Atomic<UInt>(0)
    /// Left when the thread has ended: what ``stop()`` waits on. Entered by ``start(_:)``.
    private let ended = DispatchGroup()
    private let name: String
    private let stackSize: Int?
    /// The loop while the thread runs it. Written and read on the service thread only (checked
    /// by ``withLoopIfCurrent(_:)``, its one reader): the loop never leaves its thread this way.
    private nonisolated(unsafe) var runningLoop: Loop?

    /// A service thread named `name` (seen in debuggers and `top -H`); nothing runs until ``start(_:)``.
    package init(name: String, stackSize: Int? = nil) {
        self.name = name
        self.stackSize = stackSize
    }

    /// True on the service thread while it runs.
    package var isCurrent: Bool {
        threadID.load(ordering: .acquiring) == currentThreadID()
    }

    /// Runs `body` with the loop at once when called on the service thread while the loop runs
    /// (as a callback or a work item does); nil elsewhere, where ``execute(_:)`` is the way in.
    package func withLoopIfCurrent<Result>(_ body: (Loop) -> Result) -> Result? {
        guard isCurrent, let loop = runningLoop else { return nil }
        return body(loop)
    }

    /// Traps in debug builds unless called on the service thread.
    package func assertCurrent(_ function: StaticString = #function, file: StaticString = #file, line: UInt = #line) {
        assert(isCurrent, "\(function) must be called on the service thread", file: file, line: line)
    }

    /// Starts the thread and runs `setUp` on it to create the context and the loop. Blocks
    /// until `setUp` returned or threw: returns what it made ready (the server's bound port),
    /// or throws its error once the thread has ended. Throws ``TransportError/alreadyStarted``
    /// unless the thread is idle.
    ///
    /// `setUp` runs on the service thread; when it throws, it has already freed what it made.
    package func start<Ready: Sendable>(
        _ setUp: @escaping @Sendable () throws(TransportError) -> ServiceStart<Loop, Ready>
    ) throws(TransportError) -> Ready {
        let canStart = shared.withLock { shared -> Bool in
            guard case .idle = shared.phase else { return false }
            shared.phase = .starting
            // Under the mutex, so that a stop() from now on waits for this thread's end.
            ended.enter()
            return true
        }
        guard canStart else { throw .alreadyStarted }
        // The caller must wait for the thread to have made its context, or failed to: a
        // semaphore signalled once, with the outcome handed over under a mutex.
        let outcome = Locked<Result<Ready, TransportError>?>(nil)
        let decided = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in
            run(setUp) { result in
                outcome.withLock { $0 = result }
                decided.signal()
            }
        }
        thread.name = name
        if let stackSize { thread.stackSize = stackSize }
        thread.start()
        decided.wait()
        switch outcome.withLock({ $0 })! {
        case .success(let ready):
            return ready
        case .failure(let error):
            ended.wait()
            throw error
        }
    }

    /// Runs `work` on the service thread soon, after the work queued before it, with the loop.
    /// Dropped once the thread has ended (or if it never starts): then the answer is false.
    @discardableResult
    package func execute(_ work: @escaping Work) -> Bool {
        shared.withLock { shared in
            if case .ended = shared.phase { return false }
            shared.work.append(work)
            shared.wakeable?.wake()
            return true
        }
    }

    /// Ends the loop once the work queued so far has run (no `lws_service` pass follows). Any thread.
    package func requestExit() {
        exitRequested.store(true, ordering: .releasing)
        shared.withLock { $0.wakeable?.wake() }
    }

    /// Ends the loop at once (after the work already queued) and returns when the thread has
    /// ended and the context is destroyed. Idempotent. On the service thread itself it only
    /// requests the end and returns.
    package func stop() {
        shared.withLock { shared in
            switch shared.phase {
            case .idle: shared.phase = .ended
            case .starting, .running: shared.phase = .stopping
            case .stopping, .ended: break
            }
        }
        requestExit()
        if isCurrent { return }
        waitUntilEnded()
    }

    /// Stops gracefully: runs `ending` on the service thread, which ends the loop in its own
    /// time (with ``requestExit()``, perhaps after closing connections), and returns when the
    /// thread has ended. Only the first call's `ending` runs; later calls only wait. On the
    /// service thread itself it queues `ending` and returns.
    package func stop(by ending: @escaping Work) {
        shared.withLock { shared in
            switch shared.phase {
            case .idle:
                shared.phase = .ended
            case .starting, .running:
                shared.phase = .stopping
                shared.work.append(ending)
                shared.wakeable?.wake()
            case .stopping, .ended:
                break
            }
        }
        if isCurrent { return }
        waitUntilEnded()
    }

    /// Blocks until the thread has ended (at once if it never started). Not on the service thread.
    package func waitUntilEnded() {
        precondition(!isCurrent, "the service thread cannot wait for its own end")
        ended.wait()
    }

    // MARK: The service thread

    private func run<Ready: Sendable>(
        _ setUp: () throws(TransportError) -> ServiceStart<Loop, Ready>,
        decided: (Result<Ready, TransportError>) -> Void
    ) {
        threadID.store(currentThreadID(), ordering: .releasing)
        let start: ServiceStart<Loop, Ready>
        do {
            start = try setUp()
        } catch {
            end()
            decided(.failure(error))
            return
        }
        let loop = start.loop
        runningLoop = loop
        let context = start.context
        let tick = start.tickInterval.map { interval in
            TickTimer(context: context, interval: interval) {
                loop.serviceTick()
                // A tick that ended the loop is the last one.
                return !self.exitRequested.load(ordering: .acquiring)
            }
        }
        tick?.schedule()
        shared.withLock { shared in
            shared.wakeable = WakeHandle(context)
            if case .starting = shared.phase { shared.phase = .running }
        }
        decided(.success(start.ready))

        serve(loop, context: context)
        runningLoop = nil

        // From here on no other thread may touch the context.
        shared.withLock { $0.wakeable = nil }
        tick?.cancel()
        loop.serviceWillDestroyContext()
        lws_context_destroy(context)
        loop.serviceDidDestroyContext()
        end()
    }

    /// The loop: queued work, then one `lws_service` pass, until an exit is requested or lws
    /// fails. Work queued before the exit was requested still runs.
    private func serve(_ loop: Loop, context: OpaquePointer) {
        // Two buffers swapped under the mutex: draining the queue allocates nothing.
        var running: [Work] = []
        while true {
            // Read before draining: once it reads true, this drain holds all the work queued
            // before the request, and it is the last.
            let exiting = exitRequested.load(ordering: .acquiring)
            shared.withLock { swap(&$0.work, &running) }
            for work in running { work(loop) }
            if !running.isEmpty { loop.serviceAfterWork() }
            running.removeAll(keepingCapacity: true)
            if exiting { return }
            // Requested by the work just run: drain once more, without another pass.
            if exitRequested.load(ordering: .acquiring) { continue }
            let began = Loop.timesServicePasses ? ContinuousClock.now : nil
            if lws_service(context, 0) < 0 { return }
            if let began { loop.servicePassEnded(began: began) }
            loop.serviceAfterPass()
        }
    }

    /// Publishes the end. Work still queued is dropped outside the lock: its closures may hold
    /// the last references to their owners.
    private func end() {
        var dropped: [Work] = []
        shared.withLock { shared in
            shared.phase = .ended
            shared.wakeable = nil
            swap(&shared.work, &dropped)
        }
        dropped.removeAll()
        threadID.store(0, ordering: .releasing)
        ended.leave()
    }
}

/// A context's address, to wake its service thread with `lws_cancel_service`: the one lws call
/// any thread may make. Kept as an integer because it only names the context for that call;
/// the context is alive while a handle is in `wakeable` (cleared before it is destroyed).
private struct WakeHandle: Sendable {
    private let address: UInt

    init(_ context: OpaquePointer) {
        address = UInt(bitPattern: context)
    }

    func wake() {
        lws_cancel_service(OpaquePointer(bitPattern: address))
    }
}

/// An id of the calling thread, never 0.
private func currentThreadID() -> UInt {
    #if canImport(Darwin)
    UInt(bitPattern: pthread_self())
    #else
    UInt(pthread_self())
    #endif
}
