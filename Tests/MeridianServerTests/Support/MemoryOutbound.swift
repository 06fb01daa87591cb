import Dispatch
import Foundation
import Logging
import MeridianCore
@testable import MeridianServer
import MeridianTransport
import MeridianSync

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
    }

    private let state = Locked(State())
    private let memoryThread: MemoryThread
    var thread: any HubThread { memoryThread }

    init(workArrived: DispatchSemaphore = DispatchSemaphore(value: 0)) {
        memoryThread = MemoryThread(workArrived: workArrived)
    }
    let sharedFrames = SharedFrameLedger(budget: 1 << 30)

    var now: Duration { state.withLock { $0.clock } }
    /// The wall clock moves with the hub's clock, from when the outbound was made.
    var date: Date { started.addingTimeInterval(Double(now.components.seconds) + Double(now.components.attoseconds) * 1e-18 - 1) }
    private let started = Date()
    var transportStats: TransportStats { TransportStats() }

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

    /// Takes the messages queued for `connection`, oldest first.
    func take(_ connection: ConnectionID) -> [[UInt8]] {
        state.withLock { $0.inbox.removeValue(forKey: connection) ?? [] }
    }

    func closeCode(of connection: ConnectionID) -> UInt16? { state.withLock { $0.closed[connection]?.code } }

    func closing(of connection: ConnectionID) -> (code: UInt16, reason: String)? { state.withLock { $0.closed[connection] } }

    /// Runs the work handed back so far; false if there was none.
    @discardableResult
    func runWork() -> Bool { memoryThread.runWork() }

    /// The calling thread drives the hub from now on (see ``MemoryThread/adopt()``).
    func adoptCurrentThread() { memoryThread.adopt() }

    /// Waits up to `timeout` for work from another thread, then runs it.
    func awaitWork(timeout: Duration = .seconds(5)) -> Bool {
        let (s, atto) = timeout.components
        guard memoryThread.workArrived.wait(timeout: .now() + .nanoseconds(Int(s) * 1_000_000_000 + Int(atto / 1_000_000_000))) == .success else { return false }
        memoryThread.workArrived.signal()
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

enum MemoryHubError: Error {
    case noAnswer(String)
    /// The hub refused a WebSocket upgrade (the transport answers it with this HTTP status).
    case handshakeRefused(status: Int, reason: String)
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

/// The hub's "thread" in memory: the thread that drives the test (the one that made it, or the
/// one an async test resumed on and drives the hubs from now), where work handed back from the
/// store's threads waits until the test runs it.
final class MemoryThread: HubThread {
    private let work = Locked<[@Sendable () -> Void]>([])
    /// Signalled once per piece of work handed back; several threads may share one.
    let workArrived: DispatchSemaphore
    private let owner = Locked(pthread_self())

    init(workArrived: DispatchSemaphore) {
        self.workArrived = workArrived
    }

    var isCurrent: Bool { pthread_equal(owner.withLock { $0 }, pthread_self()) != 0 }

    /// The calling thread drives the hub from now on (the test's task may resume on another
    /// thread after an `await`; it never runs on two at once).
    func adopt() { owner.withLock { $0 = pthread_self() } }

    func enqueue(_ body: @escaping @Sendable () -> Void) {
        work.withLock { $0.append(body) }
        workArrived.signal()
    }

    /// Runs the work handed back so far; false if there was none.
    func runWork() -> Bool {
        let taken = work.withLock { work in
            defer { work.removeAll() }
            return work
        }
        for body in taken {
            _ = workArrived.wait(timeout: .now())
            body()
        }
        return !taken.isEmpty
    }
}
