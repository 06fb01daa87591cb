import Foundation
@testable import MeridianClient
import MeridianCore
import MeridianTesting
import Testing

@Suite("Annotation revisions in the client")
struct RevisionClientTests {
    @Test func theMirrorKeepsTheRevisionOfAnEnding() {
        var state = SessionState(snapshot: .object([
            "seq": .number(4),
            "annotations": .array([.object([
                "id": .string("a"), "type": .string("point"), "revision": .number(3),
                "coordinate": .object(["latitude": .number(0), "longitude": .number(0)]),
            ])]),
        ]))
        #expect(state.revision(of: "a") == 3)
        func drag(_ seq: UInt64, _ state: DragState, revision: UInt64? = nil) -> SequencedEvent {
            SequencedEvent(seq: seq, isTransient: false, event: .drag(DragUpdate(
                annotation: "a", participant: "p1", state: state, coordinate: Coordinate(latitude: 1, longitude: 1), reason: nil, revision: revision)))
        }
        state.apply(drag(5, .starting))
        state.apply(drag(6, .dragging))
        #expect(state.revision(of: "a") == 3, "starts and moves leave it")
        state.apply(drag(7, .ending, revision: 7))
        state.apply(drag(8, .none))
        #expect(state.revision(of: "a") == 7)
    }

    @Test func requestsCarryIfRevision() {
        func fields(_ r: SessionRequest) -> [String: JSONValue] { r.fields }
        #expect(fields(.annotationUpdate(id: "a", changes: [:], ifRevision: 9))["ifRevision"] == .number(9))
        #expect(fields(.annotationRemove(id: "a", ifRevision: 9))["ifRevision"] == .number(9))
        #expect(fields(.drag(id: "a", state: .starting, ifRevision: 9))["ifRevision"] == .number(9))
        #expect(fields(.annotationRemove(id: "a"))["ifRevision"] == nil)
        let state = SessionState(snapshot: .object(["seq": .number(4), "annotations": .array([.object([
            "id": .string("a"), "type": .string("point"), "revision": .number(3)])])]))
        #expect(SessionRequest.annotationRemove(id: "a").conditional(on: state) == .annotationRemove(id: "a", ifRevision: 3))
        #expect(SessionRequest.drag(id: "a", state: .dragging).conditional(on: state) == .drag(id: "a", state: .dragging))
    }

    @Test func aStaleConditionalUpdateThrowsTheCurrentAnnotation() async throws {
        // Drag leases outlast the test however long its turns take in a crowded parallel run
        // (a drag idle for the default 10 s is canceled, and its ending refused).
        let server = try TestServer.overWire { $0.sessionDefaults.leaseTimeout = .seconds(3_600) }
        defer { server.stop() }
        let alice = MeridianClient(over: server, configuration: ClientConfiguration(session: "s", name: "Alice"))
        let bob = MeridianClient(over: server, configuration: ClientConfiguration(session: "s", name: "Bob"))
        let bobLog = Recorder()
        bob.delegate = bobLog
        defer { alice.close(); bob.close() }
        try alice.connect()
        try bob.connect()

        let added = try await alice.send(.annotationAdd(point("pin", 1, 2)))
        #expect(bobLog.wait { _ in bob.state?.revision(of: "pin") == added.seq })
        let seen = try #require(bob.state?.revision(of: "pin"))
        let theirs = try await alice.send(.annotationUpdate(id: "pin", changes: ["title": .string("Theirs")], ifRevision: seen))

        do {
            try await bob.send(.annotationUpdate(id: "pin", changes: ["title": .string("Mine")], ifRevision: seen))
            Issue.record("a stale conditional update was accepted")
        } catch let error as ClientError {
            #expect(error.code == "revision_conflict")
            #expect(error.field == "ifRevision")
            #expect(error.conflict?.revision == theirs.seq)
            #expect(error.conflict?.annotation["title"] == .string("Theirs"))
        }

        // Once the mirror has their change, the same edit made conditional on it goes through,
        // and so does a conditional drag start after it.
        #expect(bobLog.wait { _ in bob.state?.revision(of: "pin") == theirs.seq })
        let mine = try await bob.sendIfUnchanged(.annotationUpdate(id: "pin", changes: ["title": .string("Mine")]))
        #expect(bobLog.wait { _ in bob.state?.revision(of: "pin") == mine.seq })
        try await bob.sendIfUnchanged(.drag(id: "pin", state: .starting))
        try await bob.send(.drag(id: "pin", state: .dragging, coordinate: Coordinate(latitude: 3, longitude: 4)))
        let ended = try await bob.send(.drag(id: "pin", state: .ending))
        // The ending (seq - 1: the none follows it) gave it its new revision.
        #expect(bobLog.wait { _ in bob.state?.revision(of: "pin") == ended.seq - 1 })
    }
}
