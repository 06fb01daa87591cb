import Testing
@testable import MeridianCore

func box(_ south: Double, _ west: Double, _ north: Double, _ east: Double) -> Bounds {
    Bounds(southWest: C(south, west), northEast: C(north, east))
}

@Suite struct BoundsIntersectionTests {
    @Test func overlappingBoxesIntersectAndSeparateOnesDoNot() {
        #expect(box(0, 0, 10, 10).intersects(box(5, 5, 15, 15)))
        #expect(box(0, 0, 10, 10).intersects(box(2, 2, 3, 3)))
        #expect(!box(0, 0, 10, 10).intersects(box(11, 0, 20, 10)))
        #expect(!box(0, 0, 10, 10).intersects(box(0, 11, 10, 20)))
        #expect(!box(0, 0, 10, 10).intersects(box(-5, -5, -1, -1)))
    }

    @Test func touchingEdgesAndCornersIntersect() {
        #expect(box(0, 0, 10, 10).intersects(box(10, 0, 20, 10)))
        #expect(box(0, 0, 10, 10).intersects(box(0, 10, 10, 20)))
        #expect(box(0, 0, 10, 10).intersects(box(10, 10, 20, 20)))
        #expect(Bounds(point: C(10, 10)).intersects(box(0, 0, 10, 10)))
        #expect(Bounds(point: C(5, 5)).intersects(Bounds(point: C(5, 5))))
        #expect(!Bounds(point: C(5, 5)).intersects(Bounds(point: C(5, 5.000001))))
    }

    @Test func boxesCrossingTheAntimeridian() {
        let crossing = box(-10, 170, 10, -170)
        #expect(crossing.crossesAntimeridian)
        #expect(crossing.intersects(box(0, 175, 5, 178)))
        #expect(crossing.intersects(box(0, -178, 5, -175)))
        #expect(crossing.intersects(box(0, 160, 5, 170)))
        #expect(crossing.intersects(box(0, -170, 5, -160)))
        #expect(!crossing.intersects(box(0, -169, 5, 169)))
        #expect(!crossing.intersects(box(0, 0, 5, 10)))
        #expect(box(0, -169, 5, 169).intersects(box(0, 0, 5, 10)))
        // Both crossing: both hold the antimeridian.
        #expect(crossing.intersects(box(5, 179, 20, -179)))
        #expect(!crossing.intersects(box(11, 179, 20, -179)))
        // Each way round.
        #expect(box(0, 175, 5, 178).intersects(crossing))
        #expect(!box(0, 0, 5, 10).intersects(crossing))
    }

    @Test func longitudes180AndMinus180AreOneMeridian() {
        #expect(box(0, 170, 10, 180).intersects(box(0, -180, 10, -170)))
        #expect(box(0, -180, 10, -170).intersects(box(0, 170, 10, 180)))
        #expect(Bounds(point: C(0, 180)).intersects(Bounds(point: C(0, -180))))
        #expect(Bounds(point: C(0, -180)).intersects(box(-1, 179, 1, 180)))
        #expect(box(0, 170, 10, -175).intersects(Bounds(point: C(5, 180))))
        #expect(!box(0, 170, 10, 180).intersects(box(0, -179, 10, -170)))
        #expect(!Bounds(point: C(0, 180)).intersects(Bounds(point: C(1, -180))))
    }

    @Test func wholeLongitudeBoxesMeetEveryLongitude() {
        let band = box(-10, -180, 10, 180)
        #expect(!band.crossesAntimeridian)
        for lon in stride(from: -180.0, through: 180, by: 15) {
            #expect(band.intersects(Bounds(point: C(0, lon))))
            #expect(!band.intersects(Bounds(point: C(11, lon))))
        }
        #expect(band.intersects(box(0, 170, 5, -170)))
        #expect(Bounds.world.intersects(box(89, 179, 90, -179)))
        #expect(Bounds.world == box(-90, -180, 90, 180))
    }

    /// With edges on a 30-degree lattice, two boxes share a coordinate exactly
    /// when they share a lattice coordinate, which `contains` decides.
    @Test func agreesWithSharedLatticeCoordinates() {
        var rng = SplitMix64(seed: 7)
        let lats = Array(stride(from: -90.0, through: 90, by: 30))
        let lons = Array(stride(from: -180.0, through: 180, by: 30))
        func randomBox() -> Bounds {
            let a = rng.pick(lats), b = rng.pick(lats)
            return box(min(a, b), rng.pick(lons), max(a, b), rng.pick(lons))
        }
        var meetings = 0
        for _ in 0..<2000 {
            let a = randomBox(), b = randomBox()
            let shared = lats.contains { lat in lons.contains { lon in a.contains(C(lat, lon)) && b.contains(C(lat, lon)) } }
            #expect(a.intersects(b) == shared, "\(a) \(b)")
            #expect(a.intersects(b) == b.intersects(a))
            if shared { meetings += 1 }
        }
        #expect(meetings > 200 && meetings < 1800)
    }
}

@Suite struct AnnotationExtentTests {
    @Test func boxAroundCoordinates() throws {
        #expect(Bounds(around: [Coordinate]()) == nil)
        #expect(Bounds(around: [C(3, 4)]) == Bounds(point: C(3, 4)))
        #expect(Bounds(around: [C(3, 4), C(-1, 10), C(2, -5)]) == box(-1, -5, 3, 10))
        // Never wrapped: 179 to -179 is the long way across the map.
        let wide = try #require(Bounds(around: [C(0, 179), C(1, -179)]))
        #expect(wide == box(0, -179, 1, 179))
        #expect(!wide.crossesAntimeridian)
    }

    @Test func pointsSpanTheirCoordinate() {
        let a = point("a", at: C(10, 20))
        #expect(a.bounds == Bounds(point: C(10, 20)))
        #expect(a.anchor == C(10, 20))
    }

    @Test func shapesSpanTheirCoordinatesAndAnchorAtTheCentre() {
        let line = polyline("l", [C(0, 0), C(10, 40), C(4, -20)])
        #expect(line.bounds == box(0, -20, 10, 40))
        #expect(line.anchor == C(5, 10))
        let ring = Annotation(
            id: "g",
            shape: .polygon(Polygon(coordinates: [C(0, 0), C(0, 8), C(6, 8), C(6, 0)], holes: [[C(1, 1), C(1, 2), C(2, 2)]])))
        #expect(ring.bounds == box(0, 0, 6, 8))
        #expect(ring.anchor == C(3, 4))
    }
}
