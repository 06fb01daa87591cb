import Foundation
import MeridianSync

/// Publishes messages from any thread without waiting for Redis: they queue, and a thread of
/// its own writes whatever has queued in one pipeline (many messages per round trip), in the
/// order they were queued. A slow or unreachable Redis holds back this thread, never the caller.
///
/// When a pipeline fails (Redis unreachable), its messages are lost: `onLost` gets them, so
/// that whoever relied on them can recover (Meridian closes the members they were for, who
/// then resume). The next messages try a new connection.
public final class RedisPublisher: Sendable {
    public struct Message: Sendable {
        public var channel: String
        public var payload: [UInt8]
        public init(channel: String, payload: [UInt8]) {
            self.channel = channel
            self.payload = payload
        }
    }

    private struct State: Awaitable {
        var queue: [Message] = []
        var stopping = false
        var ended = false
        var sleeping = false
        /// Messages handed to Redis, and pipelines that failed: for metrics and tests.
        var published = 0
        var failures = 0
        var waiters: [DispatchSemaphore] = []
    }

    public let address: RedisAddress
    private let timeout: Duration
    private let onLost: @Sendable ([Message], RedisError) -> Void
    private let state = Locked(State())
    private let wake = DispatchSemaphore(value: 0)

    public init(address: RedisAddress, timeout: Duration = .seconds(2), onLost: @escaping @Sendable ([Message], RedisError) -> Void) {
        self.address = address
        self.timeout = timeout
        self.onLost = onLost
        let thread = Thread { self.run() }
        thread.name = "meridian-publish"
        thread.start()
    }

    /// Queues `payload` for `channel`.
    public func publish(_ payload: [UInt8], to channel: String) {
        let wakeThread = state.withLock { state -> Bool in
            guard !state.stopping else { return false }
            state.queue.append(Message(channel: channel, payload: payload))
            defer { state.sleeping = false }
            return state.sleeping
        }
        if wakeThread { wake.signal() }
    }

    /// Messages published so far, and pipelines that failed.
    public var counts: (published: Int, failures: Int) { state.withLock { ($0.published, $0.failures) } }

    /// Publishes what is queued, then ends the thread; returns when it has ended.
    public func stop() {
        let wakeThread = state.withLock { state -> Bool in
            state.stopping = true
            defer { state.sleeping = false }
            return state.sleeping
        }
        if wakeThread { wake.signal() }
        state.wait(until: { $0.ended })
    }

    private func run() {
        var connection: RedisConnection?
        while true {
            let (batch, stopping) = state.withLock { state -> ([Message], Bool) in
                defer { state.queue.removeAll(keepingCapacity: true) }
                if state.queue.isEmpty, !state.stopping { state.sleeping = true }
                return (state.queue, state.stopping)
            }
            if batch.isEmpty {
                if stopping { break }
                wake.wait()
                continue
            }
            do throws(RedisError) {
                let open: RedisConnection
                // A connection Redis closed while it was idle (a restart) would lose the whole
                // pipeline: checked first, and replaced, so that nothing is lost when Redis is back.
                if let connection, !connection.hasEnded {
                    open = connection
                } else {
                    open = try RedisConnection(to: address, timeout: timeout)
                }
                connection = open
                _ = try open.pipeline(batch.map { [Array("PUBLISH".utf8), Array($0.channel.utf8), $0.payload] })
                state.withLock { $0.published += batch.count }
            } catch {
                connection = nil
                state.withLock { $0.failures += 1 }
                onLost(batch, error)
            }
        }
        let waiters = state.withLock { state in
            state.ended = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.signal() }
    }
}
