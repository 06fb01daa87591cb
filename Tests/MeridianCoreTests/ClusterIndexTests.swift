import Testing
@testable import MeridianCore

/// Clusters computed from scratch: every point grouped by its cell at a zoom.
struct ClusterModel {
    var points: [String: Coordinate] = [:]
    let maxZoom: Int
    let acrossAtZero: Int

    struct Cell: Hashable, Comparable {
        var row: Int
        var column: Int
        static func < (a: Cell, b: Cell) -> Bool { (a.row, a.column) < (b.row, b.column) }
    }

    func across(_ zoom: Int) -> Int { acrossAtZero << zoom }

    func cell(_ c: Coordinate, zoom: Int) -> Cell {
        let n = Double(across(zoom))
        let lat = min(max(c.latitude, -85.0511), 85.0511)
        let x = (c.longitude + 180) / 360
        let y = (1 - mercatorY(lat) / .pi) / 2
        func clamp(_ v: Double) -> Int { Int(min(max((v * n).rounded(.down), 0), n - 1)) }
        return Cell(row: clamp(y), column: clamp(x))
    }

    /// The cell as a box; edge rows run to the poles.
    func bounds(_ cell: Cell, zoom: Int) -> Bounds {
        let n = Double(across(zoom))
        func latitude(_ row: Int) -> Double {
            if row == 0 { return 90 }
            if row == across(zoom) { return -90 }
            return ClusterModel.latitude(y: Double(row) / n)
        }
        return box(
            latitude(cell.row + 1), -180 + 360 * Double(cell.column) / n,
            latitude(cell.row), -180 + 360 * Double(cell.column + 1) / n)
    }

    /// Inverse of `mercatorY`, by bisection (independent of the index's formula).
    static func latitude(y: Double) -> Double {
        let target = (1 - 2 * y) * .pi
        var lo = -89.9999, hi = 89.9999
        for _ in 0..<200 {
            let mid = (lo + hi) / 2
            if mercatorY(mid) < target { lo = mid } else { hi = mid }
        }
        return (lo + hi) / 2
    }

    /// The expected clusters at a zoom in row, column order, with their cells.
    func clusters(zoom: Int) -> [(cell: Cell, cluster: Cluster)] {
        var cells: [String: [Cell]] = [:]
        for (id, c) in points { cells[id] = (0...maxZoom).map { cell(c, zoom: $0) } }
        let groups = Dictionary(grouping: points.keys) { cells[$0]![zoom] }
        return groups.keys.sorted().map { key in
            let ids = groups[key]!
            let coords = ids.map { points[$0]! }
            let mean = C(
                coords.map(\.latitude).reduce(0, +) / Double(ids.count), coords.map(\.longitude).reduce(0, +) / Double(ids.count))
            let split = zoom < maxZoom
                ? ((zoom + 1)...maxZoom).first { z in Set(ids.map { cells[$0]![z] }).count > 1 } : nil
            return (key, Cluster(coordinate: mean, count: ids.count, splitZoom: split, annotation: ids.count == 1 ? ids[0] : nil))
        }
    }
}

@Suite struct ClusterIndexTests {
    func expectSame(_ actual: [Cluster], _ expected: [Cluster], _ context: String) {
        #expect(actual.count == expected.count, "\(context)")
        for (a, e) in zip(actual, expected) {
            #expect(a.count == e.count && a.splitZoom == e.splitZoom && a.annotation == e.annotation, "\(context): \(a) != \(e)")
            let close = abs(a.coordinate.latitude - e.coordinate.latitude) < 1e-9
                && abs(a.coordinate.longitude - e.coordinate.longitude) < 1e-9
            #expect(close, "\(context): \(a.coordinate) != \(e.coordinate)")
            if e.count == 1 { #expect(a.coordinate == e.coordinate) }
        }
    }

    /// Points in a few tight hubs (some stacked on one coordinate), scattered
    /// ones, and some at the poles and the antimeridian.
    struct PointGenerator {
        var rng: SplitMix64
        let hubs = [C(51.5, -0.12), C(40.7, -74.0), C(-33.9, 151.2), C(0, 179.99), C(84.9, 10)]

        mutating func coordinate() -> Coordinate {
            switch rng.int(10) {
            case 0...4:
                let hub = rng.pick(hubs), spread = rng.pick([1e-5, 1e-3, 0.1, 2])
                return C(
                    min(max(hub.latitude + rng.double(-spread...spread), -90), 90),
                    min(max(hub.longitude + rng.double(-spread...spread), -180), 180))
            case 5: return rng.pick(hubs)
            case 6: return C(rng.pick([-90, 90, 85.06, -85.06, rng.double(-90...90)]), rng.pick([-180, 180, rng.double(-180...180)]))
            default: return C(rng.double(-85...85), rng.double(-180...180))
            }
        }

        /// An area whose edges avoid ±180 (where cells and boxes count the meridian differently).
        mutating func area() -> Bounds {
            let a = rng.double(-90...90)
            let size = rng.pick([0.001, 0.1, 5, 60, 200])
            let south = a, north = min(90, a + rng.double(0...size))
            let west = rng.double(-179.9...179.9)
            var east = west + rng.double(0...size)
            if east >= 179.9 { east = min(east - 360, 179.9) }
            if rng.chance(0.1) { east = west - rng.double(0...1) }  // nearly the whole world, across the antimeridian
            return box(south, west, north, east)
        }
    }

    @Test(arguments: [(16, 64), (6, 256), (4, 32)])
    func matchesBruteForceThroughInsertsMovesAndRemovals(maxZoom: Int, cellPoints: Int) {
        var gen = PointGenerator(rng: SplitMix64(seed: UInt64(maxZoom * 1000 + cellPoints)))
        var index = ClusterIndex(maxZoom: maxZoom, cellPoints: cellPoints)
        var model = ClusterModel(maxZoom: maxZoom, acrossAtZero: 256 / cellPoints)
        var splits = 0, singles = 0, areaClusters = 0
        for step in 1...1500 {
            let id = "p\(gen.rng.int(700))"
            switch gen.rng.int(10) {
            case 0...5:
                let c = gen.coordinate()
                index.insert(id, at: c)
                model.points[id] = c
            case 6, 7:
                guard let c = model.points[id] else { continue }
                let d = gen.rng.pick([1e-7, 1e-4, 0.05])
                let moved = C(
                    min(max(c.latitude + gen.rng.double(-d...d), -90), 90), min(max(c.longitude + gen.rng.double(-d...d), -180), 180))
                index.insert(id, at: moved)
                model.points[id] = moved
            default:
                index.remove(id)
                model.points[id] = nil
            }
            #expect(index.count == model.points.count)
            guard step % 100 == 0 else { continue }
            for zoom in 0...maxZoom {
                let expected = model.clusters(zoom: zoom)
                let world = index.clusters(zoom: zoom, in: .world)
                expectSame(world, expected.map(\.cluster), "step \(step) zoom \(zoom)")
                #expect(world.reduce(0) { $0 + $1.count } == index.count)
                splits += world.filter { $0.splitZoom != nil }.count
                singles += world.filter { $0.annotation != nil }.count
                for _ in 0..<4 {
                    let area = gen.area()
                    let inArea = expected.filter { model.bounds($0.cell, zoom: zoom).intersects(area) }.map(\.cluster)
                    expectSame(index.clusters(zoom: zoom, in: area), inArea, "step \(step) zoom \(zoom) \(area)")
                    areaClusters += inArea.count
                }
            }
        }
        #expect(splits > 100)
        #expect(singles > 100)
        #expect(areaClusters > 100)
    }

    @Test func twoPointsSplitWhereTheirCellsPart() {
        // 4 cells across at zoom 0 (90 degrees each), 8 at zoom 1 (45 degrees).
        var index = ClusterIndex()
        index.insert("a", at: C(10, 10))
        index.insert("b", at: C(10, 50))
        let zero = index.clusters(zoom: 0, in: .world)
        #expect(zero == [Cluster(coordinate: C(10, 30), count: 2, splitZoom: 1)])
        let one = index.clusters(zoom: 1, in: .world)
        #expect(one == [
            Cluster(coordinate: C(10, 10), count: 1, annotation: "a"),
            Cluster(coordinate: C(10, 50), count: 1, annotation: "b"),
        ])
    }

    @Test func pointsStackedOnOneCoordinateNeverSplit() {
        var index = ClusterIndex()
        for i in 0..<5 { index.insert("s\(i)", at: C(48.8566, 2.3522)) }
        for zoom in 0...16 {
            #expect(index.clusters(zoom: zoom, in: .world) == [Cluster(coordinate: C(48.8566, 2.3522), count: 5)])
        }
        // A sixth nearby splits them where it leaves their cell.
        index.insert("near", at: C(48.8566, 2.3532))
        let clusters = index.clusters(zoom: 0, in: .world)
        #expect(clusters.count == 1)
        let split = clusters[0].splitZoom
        #expect(split != nil && split! > 8 && split! <= 16)
        #expect(index.clusters(zoom: split!, in: .world).map(\.count).sorted() == [1, 5])
        #expect(index.clusters(zoom: split! - 1, in: .world).map(\.count) == [6])
    }

    @Test func aLonePointIsItsAnnotation() {
        var index = ClusterIndex(maxZoom: 10)
        index.insert("solo", at: C(-33.8688, 151.2093))
        for zoom in 0...10 {
            #expect(index.clusters(zoom: zoom, in: .world) == [Cluster(coordinate: C(-33.8688, 151.2093), count: 1, annotation: "solo")])
        }
    }

    @Test func clustersComeByRowThenColumn() {
        var index = ClusterIndex()
        index.insert("west", at: C(10, -179))
        index.insert("east", at: C(10, 179))
        index.insert("south", at: C(-10, 0))
        index.insert("north", at: C(60, 0))
        #expect(index.clusters(zoom: 3, in: .world).map(\.annotation) == ["north", "west", "east", "south"])
        // Across the antimeridian: still by column.
        #expect(index.clusters(zoom: 3, in: box(0, 170, 20, -170)).map(\.annotation) == ["west", "east"])
        #expect(index.clusters(zoom: 3, in: box(0.5, -160, 5, 160)).map(\.annotation) == [])
    }

    @Test func zoomIsClamped() {
        var index = ClusterIndex(maxZoom: 5)
        index.insert("a", at: C(1, 1))
        index.insert("b", at: C(1.001, 1.001))
        #expect(index.clusters(zoom: -3, in: .world) == index.clusters(zoom: 0, in: .world))
        #expect(index.clusters(zoom: 99, in: .world) == index.clusters(zoom: 5, in: .world))
        #expect(index.clusters(zoom: 5, in: .world).map(\.count) == [2])
        #expect(index.clusters(zoom: 5, in: .world)[0].splitZoom == nil)
    }

    @Test func latitudesBeyondMercatorFallInTheEdgeRows() {
        var index = ClusterIndex()
        index.insert("a", at: C(89, 0))
        index.insert("b", at: C(90, 0.00001))
        index.insert("c", at: C(-90, 0))
        for zoom in [0, 8, 16] {
            let north = index.clusters(zoom: zoom, in: box(89.5, -1, 90, 1))
            #expect(north.map(\.count) == [2])
            #expect(north.first?.splitZoom == nil)
            #expect(index.clusters(zoom: zoom, in: box(-90, -1, -89.5, 1)).map(\.annotation) == ["c"])
        }
    }

    @Test func movesUpdateTheMeanAndRemovalsEmptyCells() {
        var index = ClusterIndex()
        index.insert("a", at: C(10, 10))
        index.insert("b", at: C(10, 12))
        index.insert("b", at: C(10, 14))  // same cell at zoom 0
        #expect(index.count == 2)
        // 32 columns of 11.25 degrees at zoom 3 part longitudes 10 and 14.
        #expect(index.clusters(zoom: 0, in: .world) == [Cluster(coordinate: C(10, 12), count: 2, splitZoom: 3)])
        index.insert("b", at: C(-60, -100))  // another cell at every zoom
        #expect(index.clusters(zoom: 0, in: .world).map(\.annotation) == ["a", "b"])
        index.remove("a")
        index.remove("missing")
        #expect(index.count == 1)
        #expect(index.clusters(zoom: 0, in: box(0, 0, 20, 20)) == [])
        index.remove("b")
        #expect(index.clusters(zoom: 0, in: .world) == [])
    }
}
