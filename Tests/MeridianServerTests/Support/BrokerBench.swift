import Dispatch
import Foundation
import MeridianRedis
import MeridianSync
import MeridianTesting
import Testing

@testable import MeridianServer

/// Which broker a contract test runs against.
enum BrokerKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// One ``MemoryBroker``, its clock moved by the test.
    case memory
    /// A real `redis-server` behind ``RedisBroker``, on its own clock.
    case redis

    var testDescription: String { rawValue }
}

/// The broker under a contract test, and what the test does to it in the same words for both
/// kinds: nodes, time passing, an outage, a restart without persistence.
final class BrokerBench {
    let kind: BrokerKind
    let memory: MemoryBroker?
    let redis: RedisServerProcess?
    private(set) var clients: [MemoryBroker.Client] = []

    init(_ kind: BrokerKind) throws {
        self.kind = kind
        switch kind {
        case .memory: (memory, redis) = (MemoryBroker(), nil)
        case .redis: (memory, redis) = (nil, try RedisServerProcess())
        }
    }

    /// One node's broker.
    func node() -> any Broker {
        if let memory {
            let client = memory.client()
            clients.append(client)
            return client
        }
        let address = RedisAddress(host: "127.0.0.1", port: redis!.port)
        return RedisBroker(redis: RedisClient(address: address, timeout: .milliseconds(500)), linkTimeout: .milliseconds(500))
    }

    /// Lets `duration` pass on the broker's clock: the memory broker's moves; Redis's is waited for.
    func pass(_ duration: Duration) {
        if let memory { return memory.advance(by: duration) }
        let end = ContinuousClock.now + duration
        while ContinuousClock.now < end { usleep(2_000) }
    }

    /// Waits until `condition` holds: the memory broker delivers what it holds until it does or
    /// nothing is left; Redis is given up to 5 s. Returns whether it holds.
    @discardableResult
    func eventually(_ condition: () -> Bool) -> Bool {
        let deadline = ContinuousClock.now + .seconds(5)
        while !condition() {
            if let memory {
                if memory.deliver() == 0 { return condition() }
            } else {
                guard ContinuousClock.now < deadline else { return false }
                usleep(2_000)
            }
        }
        return true
    }

    /// Out of reach of every node (Redis stopped; every memory client cut off).
    func outage() {
        if let redis { return redis.stop() }
        for client in clients { client.cut() }
    }

    /// Back after an outage, without anything it held (Redis started again, without persistence;
    /// the memory broker reset, its clients healed).
    func restart() throws {
        if let redis { return try redis.start() }
        memory?.reset()
        for client in clients { client.heal() }
    }
}

/// Counts what a publisher reports lost.
final class LostCount: Sendable {
    private let count = Locked(0)
    func add(_ n: Int) { count.withLock { $0 += n } }
    var value: Int { count.withLock { $0 } }
}

extension HeardEvents {
    /// What a broker's subscriber heard (confirmations left out, as for a Redis subscriber's).
    func record(_ event: ChannelEvent) {
        switch event {
        case .message(let channel, let payload): record(channel: channel, payload)
        case .connected: record(text: "connected")
        case .disconnected: record(text: "disconnected")
        case .subscribed: return
        }
    }
}
