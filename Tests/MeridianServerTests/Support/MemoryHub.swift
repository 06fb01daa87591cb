import Dispatch
import Foundation
import Logging
import MeridianCore
@testable import MeridianServer
import MeridianTransport
import Synchronization

/// The hub's outbound seam in memory: frames are kept per connection as whole text messages,
/// the clock moves only when told, and work handed back from other threads (session loads)
/// waits until the test runs it. No conflation: a memory queue is never behind.
final class MemoryOutbound: Outbound {
    private struct State {
        var clock = Duration.seconds(1)
        var inbox: [ConnectionID: [[UInt8]]] = [:]
        /// A message whose fragments are still arriving, per connection.
        var partial: [ConnectionID: [UInt8]] = [:]
        var closed: [ConnectionID: (code: UInt16, reason: String)] = [:]
        var work: [@Sendable () -> Void] = []
    }

    private let state = Mutex(State())
    /// Signalled once per piece of work handed back; several outbounds may share one.
    private let workArrived: DispatchSemaphore

    init(workArrived: DispatchSemaphore = DispatchSemaphore(value: 0)) {
        self.workArrived = workArrived
    }
    let sharedFrames = SharedFrameLedger(budget: 1 << 30)

    var now: Duration { state.withLock { $0.clock } }

    func advance(by duration: Duration) { state.withLock { $0.clock += duration } }

    func send(_ frame: OutboundFrame, to connection: ConnectionID) {
        let (payload, first, last) = Self.unframe(frame.bytes)
        state.withLock { s in
            guard s.closed[connection] == nil else { return }
            if first { s.partial[connection] = [] }
            s.partial[connection, default: []] += payload
            if last { s.inbox[connection, default: []].append(s.partial.removeValue(forKey: connection)!) }
        }
    }

    func broadcast(_ frame: OutboundFrame, to members: [ConnectionID], except skip: ConnectionID?, superseding previous: OutboundFrame?, transient: Bool) {
        for member in members where member != skip { send(frame, to: member) }
    }

    func close(_ connection: ConnectionID, code: UInt16, reason: String) {
        state.withLock { s in
            if s.closed[connection] == nil { s.closed[connection] = (code, reason) }
        }
    }

    func execute(_ body: @escaping @Sendable () -> Void) {
        state.withLock { $0.work.append(body) }
        workArrived.signal()
    }

    /// Takes the messages queued for `connection`, oldest first.
    func take(_ connection: ConnectionID) -> [[UInt8]] {
        state.withLock { $0.inbox.removeValue(forKey: connection) ?? [] }
    }

    func closeCode(of connection: ConnectionID) -> UInt16? { state.withLock { $0.closed[connection]?.code } }

    /// Runs the work handed back so far; false if there was none.
    @discardableResult
    func runWork() -> Bool {
        let work = state.withLock { s in
            defer { s.work.removeAll() }
            return s.work
        }
        for body in work {
            _ = workArrived.wait(timeout: .now())
            body()
        }
        return !work.isEmpty
    }

    /// Waits up to `timeout` for work from another thread, then runs it.
    func awaitWork(timeout: Duration = .seconds(5)) -> Bool {
        let (s, atto) = timeout.components
        guard workArrived.wait(timeout: .now() + .nanoseconds(Int(s) * 1_000_000_000 + Int(atto / 1_000_000_000))) == .success else { return false }
        workArrived.signal()
        return runWork()
    }

    /// The payload of a pre-framed server frame, and whether it starts and ends a message.
    static func unframe(_ bytes: [UInt8]) -> (payload: [UInt8], first: Bool, last: Bool) {
        let opcode = bytes[0] & 0x0F, fin = bytes[0] & 0x80 != 0
        let length = bytes[1] & 0x7F
        let start = length < 126 ? 2 : length == 126 ? 4 : 10
        return (Array(bytes[start...]), opcode != 0, fin)
    }
}

/// A hub driven in memory through its outbound seam: no sockets, no threads of its own, the
/// in-memory store (committed inline), a clock the test moves.
final class MemoryHub {
    let outbound = MemoryOutbound()
    let hub: Hub
    private let storage = StorageSlot()
    private var nextConnection: ConnectionID = 1
    private var nextRef = 1

    init(configuration: ServerConfiguration = ServerConfiguration()) throws {
        try storage.open(configuration.storage, onBatch: { _ in })
        var logger = Logger(label: "memory-hub")
        logger.logLevel = .critical
        hub = Hub(configuration: configuration, logger: logger, storage: storage, eventLog: EventLog(), metrics: ServerMetrics())
    }

    deinit { storage.close() }

    /// A new connection, as after a WebSocket handshake from loopback.
    func connect() -> ConnectionID {
        defer { nextConnection += 1 }
        hub.open(nextConnection, handshake: Handshake(peer: "127.0.0.1"))
        return nextConnection
    }

    func disconnect(_ connection: ConnectionID) {
        hub.closed(connection, code: 1000, reason: "", on: outbound)
    }

    func tick() { hub.tick(on: outbound) }

    /// Sends a request and returns its answer (`welcome`, `ack` or `error`), running work
    /// handed back from the store's threads until it comes. Other messages stay queued.
    @discardableResult
    func request(_ type: String, _ fields: [String: JSONValue] = [:], from connection: ConnectionID) throws -> JSONValue {
        let ref = "r\(nextRef)"
        nextRef += 1
        var message = fields
        message["type"] = .string(type)
        message["ref"] = .string(ref)
        let bytes = JSONValue.object(message).encoded
        bytes.withUnsafeBytes { hub.receive($0, from: connection, on: outbound) }
        while true {
            outbound.runWork()
            if let answer = mailbox(connection).firstIndex(where: { $0["ref"]?.string == ref }) {
                return received[connection]!.remove(at: answer)
            }
            guard outbound.awaitWork() else { throw MemoryHubError.noAnswer(type) }
        }
    }

    /// Messages received by `connection` and not yet taken by `request`, oldest first.
    private(set) var received: [ConnectionID: [JSONValue]] = [:]

    func mailbox(_ connection: ConnectionID) -> [JSONValue] {
        for bytes in outbound.take(connection) {
            received[connection, default: []].append(JSONValue.parse(bytes) ?? .string(String(decoding: bytes, as: UTF8.self)))
        }
        return received[connection] ?? []
    }

    /// Takes every message `connection` received so far.
    func drain(_ connection: ConnectionID) -> [JSONValue] {
        let all = mailbox(connection)
        received[connection] = []
        return all
    }
}

enum MemoryHubError: Error {
    case noAnswer(String)
}

/// Literals for the requests the in-memory tests write.
extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByDictionaryLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
