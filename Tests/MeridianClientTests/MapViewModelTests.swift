@testable import MeridianClient
import MeridianCore
import MeridianMapBinding
import Testing

@Suite("The map's view model")
struct MapViewModelTests {
    @Test func drawsLocalDragsWhereTheViewHasThemAndRemoteOnesWhereTheSessionDoes() {
        var state = SessionState(snapshot: .object([
            "seq": .number(5),
            "annotations": .array([
                .object(["id": .string("a"), "type": .string("point"), "coordinate": .object(["latitude": .number(1), "longitude": .number(1)])]),
                .object(["id": .string("b"), "type": .string("point"), "coordinate": .object(["latitude": .number(2), "longitude": .number(2)])]),
            ]),
            "participants": .array([
                .object(["id": .string("p1"), "name": .string("Me"), "following": .string("p2")]),
                .object(["id": .string("p2"), "name": .string("Ann"), "color": .string("#ff0000"),
                         "camera": .object(["center": .object(["latitude": .number(3), "longitude": .number(4)]), "zoom": .number(9)])]),
            ]),
        ]))
        _ = state.apply(SequencedEvent(seq: 6, isTransient: false, event: .drag(DragUpdate(
            annotation: "b", participant: "p2", state: .starting, coordinate: Coordinate(latitude: 2, longitude: 2), reason: nil))))
        _ = state.apply(SequencedEvent(seq: 7, isTransient: false, event: .drag(DragUpdate(
            annotation: "b", participant: "p2", state: .dragging, coordinate: Coordinate(latitude: 2.5, longitude: 2.5), reason: nil))))
        let model = MapViewModel(state: state, me: "p1", localDrags: ["a": Coordinate(latitude: 1.5, longitude: 1)])
        #expect(model.annotations["a"]?.coordinate == Coordinate(latitude: 1.5, longitude: 1))
        #expect(model.annotations["a"]?.isDraggedHere == true && model.annotations["a"]?.draggedBy == ["p1"])
        #expect(model.annotations["b"]?.coordinate == Coordinate(latitude: 2.5, longitude: 2.5))
        #expect(model.annotations["b"]?.draggedBy == ["p2"] && model.annotations["b"]?.isDraggedHere == false)
        #expect(model.peers.map(\.id) == ["p2"])
        #expect(model.peers.first?.camera == Camera(center: Coordinate(latitude: 3, longitude: 4), zoom: 9))
        #expect(model.following == "p2")
    }
}
