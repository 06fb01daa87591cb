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

    /// An empty record: nothing heard yet.
    public init() {}

    /// Records a subscriber event: a message as `CHANNEL:PAYLOAD`, `connected`, `disconnected`; subscription confirmations are skipped.
    public func record(_ event: RedisSubscriber.Event) {
        switch event {
        case .message(let channel, let payload): record(channel: channel, payload)
        case .connected: record(text: "connected")
        case .disconnected: record(text: "disconnected")
        case .subscribed: return
        }
    }

    /// A message heard on `channel`.
    public func record(channel: String, _ payload: [UInt8]) {
        record(text: "\(channel):\(String(decoding: payload, as: UTF8.self))")
    }

    /// An event as text: `connected`, `disconnected`.
    public func record(text: String) {
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
