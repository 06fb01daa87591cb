import Foundation
import Glibc
internal import CHiredis
import MeridianSync

/// A Redis pub/sub subscription on a thread of its own: channels are added and removed from
/// any thread, messages are handed to `handler` on the subscriber's thread, in the order Redis
/// sent them. The thread waits in `poll` on its socket and an eventfd, which its worker's
/// wake-ups and stop write to.
///
/// Pub/sub keeps nothing for a subscriber that is away: when the connection breaks, the
/// handler hears `.disconnected` (what was published meanwhile is lost) and, once a new
/// connection has subscribed again to every channel, `.connected`.
public final class RedisSubscriber: Sendable {
    /// What the subscriber's handler hears, on the subscriber's thread.
    public enum Event: Sendable {
        /// A message published to `channel`, with its bytes.
        case message(channel: String, payload: [UInt8])
        /// Subscribed again to every channel after a new connection (the first one too).
        case connected
        /// The connection broke or could not be made; messages may have been missed.
        case disconnected(RedisError)
        /// Redis confirmed a subscription: messages published to `channel` from now on arrive.
        case subscribed(channel: String)
    }

    private struct State: Awaitable {
        var wanted: Set<String> = []
        /// Channels Redis confirmed on the current connection.
        var confirmed: Set<String> = []
        var ended = false
        var waiters: [DispatchSemaphore] = []

        mutating func takeWaiters() -> [DispatchSemaphore] {
            defer { waiters.removeAll() }
            return waiters
        }
    }

    /// The Redis server subscribed to.
    public let address: RedisAddress
    private let timeout: Duration
    /// How long to wait before connecting again after a failure.
    private let retry: Duration
    private let handler: @Sendable (Event) -> Void
    private let state = Locked(State())
    private let wakeDescriptor: Int32
    private let worker: WorkerThread<Never>

    /// Starts the subscriber's thread, which connects to `address` within `timeout`, tries again
    /// `retry` after each failure, and hands `handler` every ``Event``.
    public init(address: RedisAddress, timeout: Duration = .seconds(2), retry: Duration = .milliseconds(250),
                handler: @escaping @Sendable (Event) -> Void) {
        self.address = address
        self.timeout = timeout
        self.retry = retry
        self.handler = handler
        let wakeDescriptor = mrd_wake_descriptor()
        self.wakeDescriptor = wakeDescriptor
        worker = WorkerThread(name: "redis-subscribe", interrupt: { Self.signal(wakeDescriptor) })
        // The thread keeps the subscriber alive until `stop()` ends it.
        worker.start { turns in self.run(turns) }
    }

    deinit { close(wakeDescriptor) }

    /// Adds `channel` to the channels subscribed, from any thread; the handler hears
    /// ``Event/subscribed(channel:)`` once Redis confirms it.
    public func subscribe(_ channel: String) {
        if state.withLock({ $0.wanted.insert(channel).inserted }) { worker.wake() }
    }

    /// Removes `channel` from the channels subscribed, from any thread; its messages stop once
    /// Redis has handled the `UNSUBSCRIBE`.
    public func unsubscribe(_ channel: String) {
        if state.withLock({ $0.wanted.remove(channel) != nil }) { worker.wake() }
    }

    /// Blocks until Redis has confirmed `channel` on the current connection (for a caller that
    /// must not publish to it before it is heard) or the subscriber stops.
    public func waitUntilSubscribed(_ channel: String) {
        state.wait { $0.confirmed.contains(channel) || $0.ended }
    }

    /// Ends the thread; returns once it has ended.
    public func stop() {
        worker.stop()
        let waiters = state.withLock { state in
            state.ended = true
            return state.takeWaiters()
        }
        for waiter in waiters { waiter.signal() }
    }

    /// Makes the thread's `poll` return.
    private static func signal(_ wakeDescriptor: Int32) {
        var one: UInt64 = 1
        _ = write(wakeDescriptor, &one, 8)
    }

    private func drainWake() {
        var value: UInt64 = 0
        _ = read(wakeDescriptor, &value, 8)
    }

    /// The subscriber's thread: each turn (at once after the last, unless a failed connection
    /// waits `retry` first) subscribes to what changed and waits for Redis to send something
    /// or for a wake-up.
    private func run(_ turns: WorkerThread<Never>.Turns) {
        var connection: RedisConnection?
        var onConnection: Set<String> = []
        // What the handler last heard: nil nothing yet, true connected, false disconnected.
        var reported: Bool?
        var nextTurn = ContinuousClock.now
        while turns.next(until: nextTurn) != nil {
            nextTurn = .now
            if connection == nil {
                do throws(RedisError) {
                    connection = try RedisConnection(to: address, timeout: timeout)
                    onConnection = []
                } catch {
                    if reported != false { handler(.disconnected(error)) }
                    reported = false
                    nextTurn = .now + retry
                    continue
                }
            }
            guard let open = connection else { continue }
            do throws(RedisError) {
                let wanted = state.withLock { $0.wanted }
                let added = wanted.subtracting(onConnection)
                let removed = onConnection.subtracting(wanted)
                if !added.isEmpty { try open.append([Array("SUBSCRIBE".utf8)] + added.sorted().map { Array($0.utf8) }) }
                if !removed.isEmpty { try open.append([Array("UNSUBSCRIBE".utf8)] + removed.sorted().map { Array($0.utf8) }) }
                if !added.isEmpty || !removed.isEmpty { try open.flush() }
                onConnection = wanted
                if wanted.isEmpty, reported != true {
                    // Nothing to confirm on this connection: it is up now.
                    reported = true
                    handler(.connected)
                }
                guard open.hasBufferedInput || wait(for: open.descriptor) else { continue }
                for reply in try open.readAvailable() { receive(reply, reported: &reported) }
            } catch {
                connection = nil
                let waiters = state.withLock { state in
                    state.confirmed.removeAll()
                    return state.takeWaiters()
                }
                for waiter in waiters { waiter.signal() }
                if reported != false { handler(.disconnected(error)) }
                reported = false
            }
        }
    }

    /// Hands a message on, or notes a confirmed (un)subscription.
    private func receive(_ reply: RedisReply, reported: inout Bool?) {
        guard let parts = reply.elements, parts.count == 3, let kind = parts[0].text, let channel = parts[1].text else { return }
        switch kind {
        case "message":
            if case .string(let payload) = parts[2] { handler(.message(channel: channel, payload: payload)) }
        case "subscribe", "unsubscribe":
            let (waiters, allConfirmed) = state.withLock { state in
                if kind == "subscribe" { state.confirmed.insert(channel) } else { state.confirmed.remove(channel) }
                return (state.takeWaiters(), state.wanted.isSubset(of: state.confirmed))
            }
            for waiter in waiters { waiter.signal() }
            if kind == "subscribe" { handler(.subscribed(channel: channel)) }
            if reported != true, allConfirmed {
                reported = true
                handler(.connected)
            }
        default:
            break
        }
    }

    /// Waits until `descriptor` is readable (true) or the wake-up is signalled (false).
    private func wait(for descriptor: Int32) -> Bool {
        var fds = [pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0), pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
        let ready = poll(&fds, nfds_t(fds.count), -1)
        if ready > 0, fds[0].revents != 0 { drainWake() }
        return ready > 0 && fds[1].revents != 0
    }
}
