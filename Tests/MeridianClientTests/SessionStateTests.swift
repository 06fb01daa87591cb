@testable import MeridianClient
import MeridianCore
import Testing

@Suite("Session mirror ordering")
struct SessionStateTests {
    private func mirror(seq: UInt64) -> SessionState {
        SessionState(snapshot: .object([
            "seq": .number(Double(seq)),
            "annotations": .array([.object([
                "id": .string("a"), "type": .string("point"),
                "coordinate": .object(["latitude": .number(0), "longitude": .number(0)]),
            ])]),
            "participants": .array([.object(["id": .string("p1"), "name": .string("A")])]),
        ]))
    }

    private func drag(_ seq: UInt64, transient: Bool, lat: Double, state: DragState = .dragging) -> SequencedEvent {
        SequencedEvent(seq: seq, isTransient: transient, event: .drag(DragUpdate(
            annotation: "a", participant: "p1", state: state, coordinate: Coordinate(latitude: lat, longitude: 0), reason: nil)))
    }

    @Test func discreteEventsMustBeContiguous() {
        var state = mirror(seq: 5)
        #expect(state.apply(drag(6, transient: false, lat: 1)) == .applied)
        #expect(state.apply(drag(6, transient: false, lat: 2)) == .stale)
        #expect(state.apply(drag(8, transient: false, lat: 3)) == .gap(expected: 7))
        #expect(state.seq == 6)
        #expect(state.drags["a"]?["p1"]?.coordinate.latitude == 1)
    }

    @Test func transientEventsFollowTheCurrentSeqWithoutAdvancingIt() {
        var state = mirror(seq: 5)
        #expect(state.apply(drag(5, transient: true, lat: 4)) == .applied)
        #expect(state.seq == 5)
        #expect(state.apply(drag(4, transient: true, lat: 9)) == .stale)
        #expect(state.apply(drag(7, transient: true, lat: 9)) == .gap(expected: 5))
        #expect(state.drags["a"]?["p1"]?.coordinate.latitude == 4)
    }

    @Test func aViewportStreamsTransientEventMayRunAheadOfWhatItAccountedFor() {
        // Discrete events 6 and 7 were outside the area: their skipped marker comes before the
        // next discrete event, so a transient move at seq 7 arrives first (SPEC §4.7).
        var state = mirror(seq: 5)
        state.applyArea(.object(["type": .string("interest"), "seq": .number(5), "complete": .bool(false),
                                 "entered": .array([]), "left": .array([])]))
        #expect(state.apply(drag(7, transient: true, lat: 3)) == .applied)
        #expect(state.seq == 5, "a transient event accounts for nothing")
        #expect(state.drags["a"]?["p1"]?.coordinate.latitude == 3)
        state.skip(through: 7)
        #expect(state.apply(drag(8, transient: false, lat: 4)) == .applied)
    }

    @Test func dragNoneCommitsTheCoordinateAndEndsTheDrag() {
        var state = mirror(seq: 0)
        state.apply(drag(1, transient: false, lat: 1, state: .starting))
        state.apply(drag(2, transient: false, lat: 7, state: .ending))
        state.apply(drag(3, transient: false, lat: 7, state: .none))
        #expect(state.drags.isEmpty)
        #expect(state.annotations["a"] == .object([
            "id": .string("a"), "type": .string("point"),
            "coordinate": .object(["latitude": .number(7), "longitude": .number(0)]),
        ]))
    }

    @Test func liveOverwritesTransientState() {
        var state = mirror(seq: 3)
        state.applyLive(.object([
            "seq": .number(3),
            "sharedCamera": .object(["center": .object(["latitude": .number(1), "longitude": .number(2)]), "zoom": .number(3)]),
            "participants": .array([.object(["id": .string("p1"), "camera": .null, "viewport": .null, "location": .null])]),
            "annotations": .array([.object(["id": .string("a"), "coordinate": .object(["latitude": .number(5), "longitude": .number(6)])])]),
        ]))
        #expect(state.sharedCamera == Camera(center: Coordinate(latitude: 1, longitude: 2), zoom: 3))
        let expected: JSONValue = .object([
            "id": .string("a"), "type": .string("point"),
            "coordinate": .object(["latitude": .number(5), "longitude": .number(6)]),
        ])
        #expect(state.annotations["a"] == expected)
    }

    @Test func aPresenceEventAddsOrReplacesAndRemoves() {
        var state = mirror(seq: 5)
        let p1 = JSONValue.object(["id": .string("p1"), "name": .string("A renamed")])
        let p2 = JSONValue.object(["id": .string("p2"), "name": .string("B")])
        let presence = SequencedEvent(seq: 6, isTransient: false, event: .presence(joined: [p1, p2], left: [Departure(id: "p9", reason: "left")]))
        #expect(state.apply(presence) == .applied)
        #expect(state.participantOrder == ["p1", "p2"], "p1 (known from the snapshot) keeps its place; an unknown leaver is ignored")
        #expect(state.participants["p1"] == p1)
        let leaving = SequencedEvent(seq: 7, isTransient: false, event: .presence(joined: [], left: [Departure(id: "p1", reason: "disconnected")]))
        #expect(state.apply(leaving) == .applied)
        #expect(state.participantOrder == ["p2"])
    }
}
