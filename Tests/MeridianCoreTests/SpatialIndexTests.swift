import Testing
@testable import MeridianCore

/// Random boxes of the kinds a map holds: points, short and long polylines,
/// boxes across the antimeridian, at the poles and the ±180 meridian, and
/// some covering the whole world.
struct BoxGenerator {
    var rng: SplitMix64

    mutating func latitude() -> Double {
        rng.chance(0.05) ? rng.pick([-90, 90]) : rng.double(-90...90)
    }

    mutating func longitude() -> Double {
        rng.chance(0.05) ? rng.pick([-180, 180]) : rng.double(-180...180)
    }

    mutating func point() -> Coordinate { C(latitude(), longitude()) }

    /// A box `size` degrees across at most, about a random coordinate.
    mutating func near(_ size: Double) -> Bounds {
        let c = point()
        let coords = (0..<(1 + rng.int(4))).map { _ in
            C(min(max(c.latitude + rng.double(-size...size), -90), 90), min(max(c.longitude + rng.double(-size...size), -180), 180))
        }
        return Bounds(around: coords + [c])!
    }

    mutating func crossing() -> Bounds {
        let a = latitude(), b = latitude()
        return box(min(a, b), rng.double(0...180), max(a, b), rng.double(-180...0))
    }

    mutating func entry() -> Bounds {
        switch rng.int(10) {
        case 0...3: Bounds(point: point())
        case 4, 5: near(1)
        case 6: near(40)
        case 7: Bounds(around: (0..<(2 + rng.int(6))).map { _ in point() })!
        case 8: crossing()
        default: rng.chance(0.2) ? .world : near(rng.double(0...0.01))
        }
    }

    mutating func query() -> Bounds {
        switch rng.int(8) {
        case 0: .world
        case 1: crossing()
        case 2: box(-90, rng.pick([-180, 180, rng.double(-180...180)]), 90, rng.pick([-180, 180, rng.double(-180...180)]))
        case 3: near(rng.double(0...120))
        default: near(rng.double(0...8))
        }
    }
}

@Suite struct SpatialIndexTests {
    /// The keys brute force finds: every live entry whose box intersects the area.
    func expected(_ model: [Int: Bounds], _ area: Bounds) -> Set<Int> {
        Set(model.filter { $0.value.intersects(area) }.keys)
    }

    @Test(arguments: [(1.0, 1024), (10.0, 6), (0.25, 64), (7.0, 1024), (45.0, 1)])
    func matchesBruteForceThroughInsertsMovesAndRemovals(cellDegrees: Double, maxCellsPerEntry: Int) {
        var gen = BoxGenerator(rng: SplitMix64(seed: 0x5EED &+ UInt64(cellDegrees * 100)))
        var index = SpatialIndex<Int>(cellDegrees: cellDegrees, maxCellsPerEntry: maxCellsPerEntry)
        var model: [Int: Bounds] = [:]
        var found = 0, queries = 0
        for step in 0..<6000 {
            let key = gen.rng.int(2500)
            switch gen.rng.int(10) {
            case 0...5:
                let b = gen.entry()
                index.insert(key, bounds: b)
                model[key] = b
            case 6, 7:
                // A drag: a small step from where it is.
                guard let b = model[key] else { continue }
                let d = gen.rng.double(-0.3...0.3)
                let moved = box(
                    min(max(b.southWest.latitude + d, -90), 90), b.southWest.longitude,
                    min(max(b.northEast.latitude + d, -90), 90), b.northEast.longitude)
                index.insert(key, bounds: moved)
                model[key] = moved
            default:
                index.remove(key)
                model[key] = nil
            }
            #expect(index.count == model.count)
            if step % 7 == 0 {
                let area = gen.query()
                let keys = index.keys(intersecting: area)
                #expect(keys.count == Set(keys).count, "a key reported twice for \(area)")
                #expect(Set(keys) == expected(model, area), "\(area)")
                found += keys.count
                queries += 1
            }
        }
        for (key, b) in model { #expect(index.bounds(of: key) == b) }
        #expect(index.bounds(of: -1) == nil)
        // The queries found things, and not always everything.
        #expect(found > queries * 10)
        #expect(found < queries * model.count)
    }

    @Test func forEachReportsTheSameKeysAsKeysIntersecting() {
        var gen = BoxGenerator(rng: SplitMix64(seed: 99))
        var index = SpatialIndex<Int>()
        for key in 0..<1000 { index.insert(key, bounds: gen.entry()) }
        for _ in 0..<200 {
            let area = gen.query()
            var seen: [Int] = []
            index.forEach(intersecting: area) { seen.append($0) }
            #expect(seen.sorted() == index.keys(intersecting: area).sorted())
        }
    }

    @Test func theAntimeridianIsOneMeridian() {
        var index = SpatialIndex<String>()
        index.insert("east", bounds: Bounds(point: C(10, 180)))
        index.insert("west", bounds: Bounds(point: C(10, -180)))
        index.insert("line", bounds: box(20, 170, 21, 180))
        index.insert("across", bounds: box(30, 179.5, 31, -179.5))
        for i in 0..<100 { index.insert("filler\(i)", bounds: Bounds(point: C(-40, Double(i)))) }
        #expect(Set(index.keys(intersecting: box(0, -180, 40, -179))) == ["east", "west", "line", "across"])
        #expect(Set(index.keys(intersecting: box(0, 179, 40, 180))) == ["east", "west", "line", "across"])
        #expect(Set(index.keys(intersecting: box(0, 178, 40, -178))) == ["east", "west", "line", "across"])
        #expect(Set(index.keys(intersecting: box(25, -179.7, 35, -179.6))) == ["across"])
        #expect(index.keys(intersecting: box(0, -179, 40, 169)) == [])
    }

    @Test func polesAndEdgesLandInCells() {
        var index = SpatialIndex<String>(cellDegrees: 7)
        let corners = ["sw": C(-90, -180), "se": C(-90, 180), "nw": C(90, -180), "ne": C(90, 180)]
        for (key, c) in corners { index.insert(key, bounds: Bounds(point: c)) }
        for i in 0..<200 { index.insert("filler\(i)", bounds: Bounds(point: C(0, Double(i) / 10))) }
        #expect(Set(index.keys(intersecting: box(89, 100, 90, 180))) == ["nw", "ne"])
        #expect(Set(index.keys(intersecting: box(-90, -180, -89, -100))) == ["sw", "se"])
        #expect(Set(index.keys(intersecting: Bounds(point: C(90, 180)))) == ["nw", "ne"])
        #expect(index.keys(intersecting: box(-89, -180, 89, -1)) == [])
    }

    @Test func anEntryOverManyCellsIsReportedOnce() {
        var index = SpatialIndex<String>(cellDegrees: 1, maxCellsPerEntry: 100_000)
        index.insert("band", bounds: box(-10, 100, 10, -100))  // 20 x 160 cells, across the antimeridian
        for i in 0..<5000 { index.insert("p\(i)", bounds: Bounds(point: C(Double(i % 50) - 25, 0))) }
        #expect(index.keys(intersecting: box(-5, 150, 5, -150)) == ["band"])
        #expect(index.keys(intersecting: box(-20, 90, -5, 179)) == ["band"])
        #expect(index.keys(intersecting: box(9, -110, 30, -95)) == ["band"])
        #expect(index.keys(intersecting: box(11, 120, 30, 130)) == [])
    }

    @Test func largeEntriesAreFoundByEveryQueryTheyMeet() {
        var index = SpatialIndex<String>(cellDegrees: 1, maxCellsPerEntry: 4)
        index.insert("big", bounds: box(-20, -20, 20, 20))
        index.insert("small", bounds: box(0, 0, 1, 1))
        for i in 0..<100 { index.insert("far\(i)", bounds: Bounds(point: C(60, Double(i)))) }
        #expect(Set(index.keys(intersecting: box(0.5, 0.5, 0.6, 0.6))) == ["big", "small"])
        #expect(index.keys(intersecting: box(19, 19, 30, 30)) == ["big"])
        #expect(index.keys(intersecting: box(21, 21, 30, 30)) == [])
        // Shrinking it moves it into the cells; growing it moves it back.
        index.insert("big", bounds: box(-1, -1, 0, 0))
        #expect(Set(index.keys(intersecting: box(0, 0, 0.5, 0.5))) == ["big", "small"])
        #expect(index.keys(intersecting: box(19, 19, 30, 30)) == [])
        index.insert("big", bounds: .world)
        #expect(index.keys(intersecting: box(19, 19, 30, 30)) == ["big"])
        index.remove("big")
        #expect(index.keys(intersecting: box(0, 0, 0.5, 0.5)) == ["small"])
    }

    @Test func movesReplaceTheEntry() {
        var index = SpatialIndex<String>()
        index.insert("a", bounds: Bounds(point: C(10.2, 20.2)))
        index.insert("a", bounds: Bounds(point: C(10.7, 20.7)))  // same cell
        #expect(index.count == 1)
        #expect(index.bounds(of: "a") == Bounds(point: C(10.7, 20.7)))
        #expect(index.keys(intersecting: box(10.1, 20.1, 10.3, 20.3)) == [])
        #expect(index.keys(intersecting: box(10.6, 20.6, 10.8, 20.8)) == ["a"])
        index.insert("a", bounds: Bounds(point: C(-30, -60)))  // another cell
        #expect(index.count == 1)
        #expect(index.keys(intersecting: box(10, 20, 11, 21)) == [])
        #expect(index.keys(intersecting: box(-31, -61, -29, -59)) == ["a"])
        index.remove("nobody")
        #expect(index.count == 1)
        index.remove("a")
        #expect(index.count == 0)
        #expect(index.bounds(of: "a") == nil)
        #expect(index.keys(intersecting: .world) == [])
    }
}
