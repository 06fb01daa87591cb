import MeridianCore
import MeridianStorage
import Testing

@Suite struct RestoreTests {
    func session() throws -> (Session, ParticipantID) {
        var s = Session(id: "m", epoch: "old", settings: SessionSettings(dragPolicy: .exclusive))
        let (pid, _) = try s.join(JoinRequest(name: "Ann", role: .owner), at: .zero).get()
        let pin = Annotation(id: "pin", shape: .point(Point(coordinate: coordinate(10, 10), draggable: true, canShowCallout: true)), title: "Pin")
        _ = try s.apply(.addAnnotation(pin), from: pid, at: .zero).get()
        return (s, pid)
    }

    @Test func aDraggedAnnotationIsRecordedAtItsCommittedCoordinate() throws {
        var (s, pid) = try session()
        _ = try s.apply(.drag(annotation: "pin", state: .starting, coordinate: nil), from: pid, at: .seconds(1)).get()
        _ = try s.apply(.drag(annotation: "pin", state: .dragging, coordinate: coordinate(20, 20)), from: pid, at: .seconds(1)).get()
        #expect(s.annotations["pin"]?.point?.coordinate == coordinate(20, 20))
        #expect(s.record.annotations.first?.point?.coordinate == coordinate(10, 10))
        _ = try s.apply(.drag(annotation: "pin", state: .ending, coordinate: coordinate(30, 30)), from: pid, at: .seconds(2)).get()
        #expect(s.record.annotations.first?.point?.coordinate == coordinate(30, 30))
    }

    @Test func aRestoredSessionHasANewEpochNoParticipantsAndTheStoredState() throws {
        var (s, pid) = try session()
        _ = try s.apply(.showCallout(Callout(title: "Here", anchor: .annotation("pin"))), from: pid, at: .seconds(1)).get()
        let store = InMemorySessionStore()
        try store.commit([.update(SessionUpdate(record: s.record, epoch: s.epoch))])
        let stored = try #require(try store.load("m"))
        let restored = Session(restoring: stored.record, epoch: "new")
        #expect(restored.epoch == "new")
        #expect(restored.participants.isEmpty)
        #expect(restored.seq == s.seq)
        #expect(restored.annotations == s.annotations)
        #expect(restored.callout == s.callout)
        #expect(restored.settings == s.settings)
        #expect(restored.record == s.record)
    }

    @Test func aCalloutAnchoredToAParticipantIsNotRestored() throws {
        let record = SessionRecord(id: "m", settings: SessionSettings(), callout: Callout(title: "Me", anchor: .participant("p1")), seq: 3)
        #expect(Session(restoring: record, epoch: "e").callout == nil)
    }
}
