import Testing
@testable import MeridianCore

@Suite struct MapLoadTests {
    @Test(arguments: [MapLoad(state: .loading), MapLoad(state: .loaded), MapLoad(state: .failed, message: "style 404")])
    func mapLoadStatesAreStoredAndBroadcast(m: MapLoad) throws {
        var (w, _, _, v) = try trio()
        let out = try w.ok(.mapLoad(m), by: v).events
        #expect(out.map(\.event) == [.mapLoad(v, m)])
        #expect(out.allSatisfy { !$0.isTransient })
        #expect(w.participant(v)?.mapLoad == m)
    }

    @Test(arguments: [
        MapLoad(state: .failed), MapLoad(state: .failed, message: ""),
        MapLoad(state: .failed, message: String(repeating: "m", count: 1_025)), MapLoad(state: .loaded, message: "ok"),
    ])
    func failedNeedsAMessageOthersNone(m: MapLoad) throws {
        var (w, _, _, v) = try trio()
        try w.ok(.mapLoad(MapLoad(state: .loading)), by: v)
        try w.refuse(.mapLoad(m), by: v, .invalidField, field: "message")
    }
}

@Suite struct LocationTests {
    @Test(arguments: TrackingMode.allCases)
    func fullLocationIsSharedAsSentAndTransient(mode: TrackingMode) throws {
        var (w, _, _, v) = try trio()
        let seq = w.session.seq
        let loc = UserLocation(coordinate: C(48.137154, 11.576124), accuracy: 5, heading: 90, course: 180, tracking: mode)
        let out = try w.ok(.location(loc), by: v).events
        #expect(out.map(\.event) == [.location(v, loc)])
        #expect(out.map(\.conflation) == [.location(v)])
        #expect(out.map(\.seq) == [seq])
        #expect(w.session.seq == seq)
        #expect(w.participant(v)?.location == loc)
    }

    static func onGrid(_ v: Double) -> Bool {
        abs(v / UserLocation.coarseGrid - (v / UserLocation.coarseGrid).rounded()) < 1e-9
    }

    @Test(arguments: [
        UserLocation(coordinate: C(48.137154, 11.576124), accuracy: 5, heading: 90, course: 180, tracking: .followWithHeading, authorization: .reduced),
        UserLocation(coordinate: C(-33.8688, 151.2093), accuracy: 12_000, tracking: .follow, authorization: .reduced),
        UserLocation(coordinate: C(0.024, -0.026), accuracy: 0, heading: 0, authorization: .reduced),
        UserLocation(coordinate: C(89.99, 179.99), accuracy: 4_999, course: 360, authorization: .reduced),
        UserLocation(coordinate: C(-90, -180), accuracy: 1, authorization: .reduced),
    ])
    func reducedLocationIsCoarseInStateAndBroadcast(sent: UserLocation) throws {
        var (w, o, _, v) = try trio()
        let out = try w.ok(.location(sent), by: v).events
        let stored = try #require(w.participant(v)?.location)
        #expect(out.map(\.event) == [.location(v, stored)])
        #expect(Self.onGrid(stored.coordinate.latitude))
        #expect(Self.onGrid(stored.coordinate.longitude))
        #expect((-90...90).contains(stored.coordinate.latitude))
        #expect((-180..<180).contains(stored.coordinate.longitude))
        #expect(abs(stored.coordinate.latitude - sent.coordinate.latitude) <= 0.025 + 1e-9)
        #expect(Geo.angularDistance(stored.coordinate.longitude, sent.coordinate.longitude) <= 0.025 + 1e-9)
        #expect(stored.accuracy >= 5_000)
        #expect(stored.accuracy == max(sent.accuracy, 5_000))
        #expect(stored.heading == nil)
        #expect(stored.course == nil)
        #expect(stored.tracking == sent.tracking)
        #expect(stored.authorization == .reduced)
        // A callout anchored to the participant points at the coarse location too.
        try w.ok(.showCallout(Callout(title: "Vi", anchor: .participant(v))), by: o)
        #expect(w.session.calloutCoordinate == stored.coordinate)
    }

    @Test(arguments: [
        (UserLocation(coordinate: C(91, 0), accuracy: 5), "location.coordinate.latitude"),
        (UserLocation(coordinate: C(0, .infinity), accuracy: 5), "location.coordinate.longitude"),
        (UserLocation(coordinate: C(0, 0), accuracy: -1), "location.accuracy"),
        (UserLocation(coordinate: C(0, 0), accuracy: .nan), "location.accuracy"),
        (UserLocation(coordinate: C(0, 0), accuracy: 5, heading: 361), "location.heading"),
        (UserLocation(coordinate: C(0, 0), accuracy: 5, course: -1), "location.course"),
    ])
    func invalidLocationIsRefused(loc: UserLocation, field: String) throws {
        var (w, _, _, v) = try trio()
        try w.ok(.location(UserLocation(coordinate: C(1, 1), accuracy: 5)), by: v)
        try w.refuse(.location(loc), by: v, .invalidField, field: field)
    }

    @Test func clearingTheLocationIsDiscrete() throws {
        var (w, _, _, v) = try trio()
        try w.ok(.location(UserLocation(coordinate: C(1, 1), accuracy: 5)), by: v)
        let seq = w.session.seq
        let out = try w.ok(.location(nil), by: v).events
        #expect(out.map(\.event) == [.location(v, nil)])
        #expect(out.map(\.seq) == [seq + 1])
        #expect(out[0].conflation == nil)
        #expect(w.participant(v)?.location == nil)
    }
}
