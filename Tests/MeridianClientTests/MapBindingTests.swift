import Foundation
@testable import MeridianClient
import MeridianCore
import MeridianMapBinding
import MeridianServer
import MeridianTesting
import Testing

/// Wakes a test whenever a binding publishes a model, to wait for one.
final class ModelRecorder: @unchecked Sendable {
    private let condition = NSCondition()
    private let binding: MeridianMapBinding

    init(_ binding: MeridianMapBinding) {
        self.binding = binding
        binding.onChange = { [condition] _ in
            condition.lock()
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Waits until `predicate` holds of the binding's model; false after `timeout`.
    @discardableResult
    func wait(timeout: TimeInterval = 10, _ predicate: (MapViewModel) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(binding.model) {
            if !condition.wait(until: deadline) { return predicate(binding.model) }
        }
        return true
    }
}

/// A libwebsockets transport that keeps what it sent.
final class CountingTransport: ClientTransport, @unchecked Sendable {
    private let inner: any ClientTransport
    private let lock = NSLock()
    private var texts: [String] = []
    init(port: Int) { inner = Wire.transport(port: port) }
    var sent: [String] { lock.withLock { texts } }
    func connect(timeout: Duration) throws { try inner.connect(timeout: timeout) }
    func send(_ text: String) {
        lock.withLock { texts.append(text) }
        inner.send(text)
    }
    func receive(timeout: Duration) throws -> TransportMessage { try inner.receive(timeout: timeout) }
    func close() { inner.close() }
}

func drags(_ events: [SequencedEvent], of participant: String? = nil) -> [DragUpdate] {
    events.compactMap { if case .drag(let d) = $0.event, participant == nil || d.participant == participant { d } else { nil } }
}

@Suite("The map binding against a real server")
struct MapBindingTests {
    @Test func aGestureAt120HzAgainstARateLimitOf200PerSecondEndsWhereTheFingerDid() async throws {
        let server = try TestServer.overWire {
            $0.rateLimit = RateLimit(perSecond: 200, burst: 20)
            $0.sessionDefaults.leaseTimeout = .seconds(3_600)
        }
        defer { server.stop() }
        let watcher = MeridianClient(over: server, configuration: ClientConfiguration(session: "s", name: "Watcher"))
        let log = Recorder()
        watcher.delegate = log
        let transport = CountingTransport(port: server.port)
        let client = MeridianClient(configuration: ClientConfiguration(session: "s", name: "Pilot"), transport: { transport })
        defer { watcher.close(); client.close() }
        try watcher.connect()
        let me = try client.connect().participant
        try await client.send(.annotationAdd(point("pin", 0, 0)))
        let binding = MeridianMapBinding(client: client)
        let models = ModelRecorder(binding)
        #expect(models.wait { $0.annotations["pin"] != nil })

        // The finger: 120 positions a second for one second, as the SDK reports them (each
        // 1/120 s after the one before was drawn).
        let began = ContinuousClock.now
        binding.dragStateChanged(annotation: "pin", to: .starting)
        binding.dragStateChanged(annotation: "pin", to: .dragging)
        var last = Coordinate(latitude: 0, longitude: 0)
        for i in 1...120 {
            last = Coordinate(latitude: Double(i) / 100, longitude: Double(i) / 200)
            binding.annotationDragged("pin", to: last)
            #expect(models.wait { $0.annotations["pin"]?.coordinate == last }, "the model draws the finger's position")
            try await Task.sleep(for: .milliseconds(1000.0 / 120))
        }
        binding.dragStateChanged(annotation: "pin", to: .ending)
        let elapsed = ContinuousClock.now - began

        // The session committed the last position; nothing was refused on the way.
        #expect(log.waitForEvents { drags($0, of: me).contains { $0.state == .ending } })
        let steps = drags(log.events, of: me)
        #expect(steps.first?.state == .starting)
        #expect(steps.last { $0.state == .ending }?.coordinate == last)
        // The binding sent at most one step per 10 ms (100/s, half the limit), the rest conflated.
        let moves = transport.sent.filter { $0.contains(#""state":"dragging""#) }.count
        let allowed = Int(elapsed / .milliseconds(10)) + 2
        #expect(moves <= allowed && moves >= 30, "\(moves) moves sent in \(elapsed) (at most \(allowed))")
        #expect(binding.model.refusedDrag == nil)
        #expect(models.wait { $0.annotations["pin"]?.isDraggedHere == false && $0.annotations["pin"]?.coordinate == last })
    }

    @Test func aDragTheConflictPolicyRefusesSnapsBack() async throws {
        let server = try TestServer.overWire { $0.sessionDefaults.leaseTimeout = .seconds(3_600) }
        defer { server.stop() }
        let holder = MeridianClient(over: server, configuration: ClientConfiguration(session: "s", name: "Holder"))
        let transport = CountingTransport(port: server.port)
        let client = MeridianClient(configuration: ClientConfiguration(session: "s", name: "Late"), transport: { transport })
        let log = Recorder()
        client.delegate = log
        defer { holder.close(); client.close() }
        let holderID = try holder.connect().participant
        let me = try client.connect().participant
        try await holder.send(.annotationAdd(point("pin", 10, 20)))
        try await holder.send(.drag(id: "pin", state: .starting))
        let binding = MeridianMapBinding(client: client)
        let models = ModelRecorder(binding)
        #expect(models.wait { $0.annotations["pin"]?.draggedBy == [holderID] })

        binding.dragStateChanged(annotation: "pin", to: .starting, coordinate: Coordinate(latitude: 10, longitude: 20))
        binding.annotationDragged("pin", to: Coordinate(latitude: 11, longitude: 21))
        #expect(models.wait { $0.refusedDrag != nil })
        #expect(binding.model.refusedDrag == DragRefusal(annotation: "pin", reason: "drag_conflict", holder: holderID))
        // Drawn where the session has it, by its holder only.
        #expect(models.wait { $0.annotations["pin"]?.coordinate == Coordinate(latitude: 10, longitude: 20) && $0.annotations["pin"]?.isDraggedHere == false })
        // The view's later positions and its end send nothing: the select after them (the binding
        // handles its inputs in order) is the first request sent after the refused ones.
        let sentBefore = transport.sent.count
        binding.annotationDragged("pin", to: Coordinate(latitude: 12, longitude: 22))
        binding.dragStateChanged(annotation: "pin", to: .ending)
        binding.didSelect(annotation: "pin")
        #expect(log.wait { $0.contains { if case .didSelectAnnotation(me, "pin", _) = $0 { true } else { false } } })
        let after = transport.sent.dropFirst(sentBefore)
        #expect(after.count == 1 && after.first?.contains(#""type":"select""#) == true, "sent after the refusal: \(after)")
        #expect(client.state?.drags["pin"]?.keys.map { $0 } == [holderID])
    }

    @Test func aDragInterruptedByADroppedConnectionGoesOnAfterTheReconnect() async throws {
        let server = try TestServer.overWire {
            $0.transport.pingInterval = .seconds(1)
            $0.transport.idleTimeout = .seconds(2)
            $0.sessionDefaults.leaseTimeout = .seconds(3_600)
        }
        defer { server.stop() }
        let watcher = MeridianClient(over: server, configuration: ClientConfiguration(session: "s", name: "Watcher"))
        let log = Recorder()
        watcher.delegate = log
        let box = TransportBox(port: server.port)
        let client = MeridianClient(
            configuration: ClientConfiguration(session: "s", name: "Driver", reconnect: ReconnectPolicy(initialDelay: .milliseconds(20), maxDelay: .milliseconds(200))),
            transport: { box.make() })
        defer { watcher.close(); client.close() }
        try watcher.connect()
        let first = try client.connect().participant
        try await client.send(.annotationAdd(point("truck", 0, 0)))
        let binding = MeridianMapBinding(client: client)
        let models = ModelRecorder(binding)
        #expect(models.wait { $0.annotations["truck"] != nil })

        binding.dragStateChanged(annotation: "truck", to: .starting)
        binding.annotationDragged("truck", to: Coordinate(latitude: 1, longitude: 1))
        #expect(log.waitForEvents { drags($0, of: first).contains { $0.state == .dragging } })
        // The connection drops mid-drag: the session cancels the drag, the view goes on dragging.
        let transport = try #require(box.current)
        transport.pauseReading()
        try await nudge(watcher)
        #expect(log.waitForEvents(timeout: 30) { drags($0, of: first).contains { $0.state == .canceling } })
        binding.annotationDragged("truck", to: Coordinate(latitude: 2, longitude: 2))
        transport.resumeReading()
        #expect(models.wait(timeout: 30) { _ in client.welcome.map { $0.participant != first } ?? false })

        // Back: the drag starts again at the view's position, and ends where the finger does.
        let second = try #require(client.welcome?.participant)
        #expect(log.waitForEvents(timeout: 30) { drags($0, of: second).contains { $0.state == .dragging && $0.coordinate == Coordinate(latitude: 2, longitude: 2) } })
        binding.annotationDragged("truck", to: Coordinate(latitude: 3, longitude: 3))
        binding.dragStateChanged(annotation: "truck", to: .ending)
        #expect(log.waitForEvents { drags($0, of: second).contains { $0.state == .ending } })
        #expect(drags(log.events, of: second).map(\.state).first == .starting)
        #expect(drags(log.events, of: second).last { $0.state == .ending }?.coordinate == Coordinate(latitude: 3, longitude: 3))
        #expect(models.wait { $0.annotations["truck"]?.coordinate == Coordinate(latitude: 3, longitude: 3) && $0.annotations["truck"]?.isDraggedHere == false })
    }

    @Test func aConflictedEditShowsUntilTheAppKeepsTheirsOrTakesMine() async throws {
        let server = try TestServer.overWire()
        defer { server.stop() }
        let colleague = MeridianClient(over: server, configuration: ClientConfiguration(session: "s", name: "Colleague"))
        let client = MeridianClient(over: server, configuration: ClientConfiguration(session: "s", name: "Me"))
        defer { colleague.close(); client.close() }
        try colleague.connect()
        try client.connect()
        let added = try await client.send(.annotationAdd(point("a", 0, 0)))
        try await client.send(.annotationAdd(point("b", 0, 0)))
        let binding = MeridianMapBinding(client: client)
        let models = ModelRecorder(binding)
        let theirsA = try await colleague.send(.annotationUpdate(id: "a", changes: ["title": .string("theirs")]))
        try await colleague.send(.annotationUpdate(id: "b", changes: ["title": .string("theirs")]))

        // Edits made against what the app saw before the colleague's changes.
        let seenB = added.seq + 1
        try binding.edit(.annotationUpdate(id: "a", changes: ["title": .string("mine")], ifRevision: added.seq))
        try binding.edit(.annotationUpdate(id: "b", changes: ["title": .string("mine")], ifRevision: seenB))
        #expect(models.wait { $0.conflicts.count == 2 })
        let conflicts = binding.model.conflicts
        #expect(conflicts.map { $0.theirs.annotation["title"] } == [.string("theirs"), .string("theirs")])
        #expect(conflicts[0].theirs.revision == theirsA.seq)

        binding.resolve(conflicts[0], keeping: .mine)
        binding.resolve(conflicts[1], keeping: .theirs)
        #expect(models.wait { $0.conflicts.isEmpty && $0.annotations["a"]?.annotation["title"] == .string("mine") })
        #expect(binding.model.annotations["b"]?.annotation["title"] == .string("theirs"))
    }
}
