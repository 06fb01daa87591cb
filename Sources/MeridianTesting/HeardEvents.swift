import Dispatch
import MeridianRedis
import MeridianSync

/// What a Redis subscriber (or a cluster broker's) heard, as text: `connected`, `disconnected`,
/// `CHANNEL:PAYLOAD`. Confirmations are left out: where they fall among the others differs
/// from one connection to the next. Waiting for a count is a wait on a condition.
public final class HeardEvents: Sendable {
    struct State: Awaitable {
        var events: [String] = []
        var waiters: [DispatchSemaphore] = []
    }

    private let state = Locked(State())

    public init() {}

    public func record(_ event: RedisSubscriber.Event) {
        let text: String
        switch event {
        case .message(let channel, let payload): text = "\(channel):\(String(decoding: payload, as: UTF8.self))"
        case .connected: text = "connected"
        case .disconnected: text = "disconnected"
        case .subscribed: return
        }
        let waiters = state.withLock { state in
            state.events.append(text)
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.signal() }
    }

    /// Everything heard so far.
    public var all: [String] { state.withLock { $0.events } }

    /// Waits until `count` events were heard, and returns them.
    public func wait(for count: Int) -> [String] {
        state.wait { $0.events.count >= count }
        return all
    }
}
