import Foundation
import Logging
import MeridianClient
import MeridianClientTransport
import MeridianCore
import MeridianServer
import MeridianTesting
import Testing

/// Records a client's updates and lets a test wait for a condition on them or on its mirror.
final class Recorder: MeridianClientDelegate, @unchecked Sendable {
    private let condition = NSCondition()
    private var recorded: [ClientUpdate] = []
    private var applied: [SequencedEvent] = []

    func client(_ client: MeridianClient, didApply event: SequencedEvent) {
        record { applied.append(event) }
    }

    var events: [SequencedEvent] { condition.withLock { applied } }

    /// Waits until `predicate` holds of the events applied, re-checking on each; false after `timeout`.
    @discardableResult
    func waitForEvents(timeout: TimeInterval = 10, _ predicate: ([SequencedEvent]) -> Bool) -> Bool {
        waitUntil(timeout: timeout) { predicate(applied) }
    }

    func client(_ client: MeridianClient, didReceive update: ClientUpdate) {
        record { recorded.append(update) }
    }

    var updates: [ClientUpdate] { condition.withLock { recorded } }

    /// Waits until `predicate` holds, re-checking on every update; false after `timeout`.
    @discardableResult
    func wait(timeout: TimeInterval = 10, _ predicate: ([ClientUpdate]) -> Bool) -> Bool {
        waitUntil(timeout: timeout) { predicate(recorded) }
    }

    private func record(_ change: () -> Void) {
        condition.lock()
        change()
        condition.broadcast()
        condition.unlock()
    }

    /// Waits, under the lock, until `holds` is true, re-checking whenever something is recorded.
    private func waitUntil(timeout: TimeInterval, _ holds: () -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !holds() {
            if !condition.wait(until: deadline) { return holds() }
        }
        return true
    }
}

/// A libwebsockets transport whose reading can be paused, so the server sees a slow consumer.
final class PausableTransport: ClientTransport {
    let socket: WebSocketClient
    init(port: Int) { socket = WebSocketClient(port: port) }
    func connect(timeout: Duration) throws { try socket.connect(timeout: timeout) }
    func send(_ text: String) { socket.send(text) }
    func receive(timeout: Duration) throws -> TransportMessage {
        switch try socket.receive(timeout: timeout) {
        case .text(let t): return .text(t)
        case .closed(let code, _): return .closed(code: code)
        }
    }
    func close() { socket.close() }
}

/// Hands out transports and remembers the latest, for tests that pause it.
final class TransportBox: @unchecked Sendable {
    private let lock = NSLock()
    private var latest: PausableTransport?
    let port: Int
    init(port: Int) { self.port = port }
    func make() -> any ClientTransport {
        let t = PausableTransport(port: port)
        lock.withLock { latest = t }
        return t
    }
    var current: PausableTransport? { lock.withLock { latest } }
}

func point(_ id: String, _ lat: Double, _ lon: Double, metadata: [String: JSONValue] = [:]) -> JSONValue {
    .object([
        "id": .string(id), "type": .string("point"), "draggable": .bool(true),
        "coordinate": .object(["latitude": .number(lat), "longitude": .number(lon)]),
        "title": .string(id), "canShowCallout": .bool(true), "metadata": .object(metadata),
    ])
}

