/// A group of points shown as one marker at a low zoom.
public struct Cluster: Hashable, Sendable {
    /// The mean of its members' coordinates (in its cell; cells never cross the antimeridian).
    public var coordinate: Coordinate
    /// How many points the cluster holds; 1 for a single annotation.
    public var count: Int
    /// The lowest zoom (above the zoom it was asked for, up to the index's
    /// `maxZoom`) at which its members fall into more than one cluster; nil when
    /// they never do (one member, or all in one cell at `maxZoom`, e.g. all at
    /// one coordinate).
    public var splitZoom: Int?
    /// The annotation id when `count` is 1.
    public var annotation: String?

    /// Builds a cluster of `count` points at `coordinate`.
    public init(coordinate: Coordinate, count: Int, splitZoom: Int? = nil, annotation: String? = nil) {
        self.coordinate = coordinate
        self.count = count
        self.splitZoom = splitZoom
        self.annotation = annotation
    }
}

/// Points clustered on a Web Mercator quadtree grid at every zoom from 0 to
/// `maxZoom`, kept up to date point by point.
///
/// At zoom z a cell is `cellPoints` points of the 256 * 2^z point-wide world:
/// 2^z * 256 / cellPoints cells across and down, so each cell at zoom z + 1
/// lies inside one cell at zoom z. Each zoom keeps a count and coordinate sums
/// per non-empty cell, so inserting, moving or removing a point costs one step
/// per zoom. Latitudes beyond ±`Geo.maxMercatorLatitude` fall in the edge rows;
/// longitudes are not wrapped (180 is in the last column, -180 in the first).
public struct ClusterIndex: Sendable {
    /// The deepest zoom of the grid (0–24); queries at higher zooms are answered at this one.
    public let maxZoom: Int
    /// The side of a grid cell in points, at every zoom (a power of two, 1–256).
    public let cellPoints: Int
    /// log2 of the cells across at zoom 0.
    let shift: Int

    struct Point: Sendable {
        var coordinate: Coordinate
        /// Column and row at `maxZoom`.
        var column: Int
        var row: Int
    }

    struct Sum: Sendable {
        var count: Int
        var latitude: Double
        var longitude: Double
    }

    var points: [String: Point] = [:]
    /// Per zoom: cell key (row * cells across + column) -> count and sums.
    var levels: [[Int: Sum]]
    /// The ids in each non-empty cell at `maxZoom`.
    var members: [Int: Set<String>] = [:]

    /// `maxZoom` must be in 0...24, `cellPoints` a power of two from 1 to 256,
    /// and there may be at most 2^30 cells across at `maxZoom`.
    public init(maxZoom: Int = 16, cellPoints: Int = 64) {
        precondition((0...24).contains(maxZoom), "maxZoom must be in 0...24")
        precondition(cellPoints >= 1 && cellPoints <= 256 && cellPoints & (cellPoints - 1) == 0,
            "cellPoints must be a power of two from 1 to 256")
        self.maxZoom = maxZoom
        self.cellPoints = cellPoints
        shift = (256 / cellPoints).trailingZeroBitCount
        precondition(maxZoom + shift <= 30, "at most 2^30 cells across at maxZoom")
        levels = Array(repeating: [:], count: maxZoom + 1)
    }

    /// How many points the index holds.
    public var count: Int { points.count }

    /// Cells across (and down) at a zoom.
    func cellsAcross(_ zoom: Int) -> Int { 1 << (zoom + shift) }

    func key(row: Int, column: Int, zoom: Int) -> Int { row << (zoom + shift) | column }

    /// The key at `zoom` of the cell holding a point at `maxZoom` column and row.
    func key(_ p: Point, zoom: Int) -> Int {
        let down = maxZoom - zoom
        return key(row: p.row >> down, column: p.column >> down, zoom: zoom)
    }

    func point(_ c: Coordinate) -> Point {
        let n = cellsAcross(maxZoom)
        return Point(
            coordinate: c,
            column: Mercator.cell(Mercator.x(longitude: c.longitude), count: n),
            row: Mercator.cell(Mercator.y(latitude: c.latitude), count: n))
    }

    /// Inserts the point, or moves it when `id` is already in the index.
    public mutating func insert(_ id: String, at coordinate: Coordinate) {
        let new = point(coordinate)
        guard let old = points.updateValue(new, forKey: id) else {
            for zoom in 0...maxZoom { add(new, at: key(new, zoom: zoom), zoom: zoom) }
            members[key(new, zoom: maxZoom), default: []].insert(id)
            return
        }
        guard old.coordinate != coordinate else { return }
        for zoom in 0...maxZoom {
            let from = key(old, zoom: zoom), to = key(new, zoom: zoom)
            if from == to, let i = levels[zoom].index(forKey: from) {
                levels[zoom].values[i].latitude += coordinate.latitude - old.coordinate.latitude
                levels[zoom].values[i].longitude += coordinate.longitude - old.coordinate.longitude
            } else {
                subtract(old, at: from, zoom: zoom)
                add(new, at: to, zoom: zoom)
            }
        }
        let from = key(old, zoom: maxZoom), to = key(new, zoom: maxZoom)
        if from != to {
            removeMember(id, from)
            members[to, default: []].insert(id)
        }
    }

    /// Removes the point; nothing happens when there is none.
    public mutating func remove(_ id: String) {
        guard let old = points.removeValue(forKey: id) else { return }
        for zoom in 0...maxZoom { subtract(old, at: key(old, zoom: zoom), zoom: zoom) }
        removeMember(id, key(old, zoom: maxZoom))
    }

    mutating func add(_ p: Point, at key: Int, zoom: Int) {
        if let i = levels[zoom].index(forKey: key) {
            levels[zoom].values[i].count += 1
            levels[zoom].values[i].latitude += p.coordinate.latitude
            levels[zoom].values[i].longitude += p.coordinate.longitude
        } else {
            levels[zoom][key] = Sum(count: 1, latitude: p.coordinate.latitude, longitude: p.coordinate.longitude)
        }
    }

    mutating func subtract(_ p: Point, at key: Int, zoom: Int) {
        guard let i = levels[zoom].index(forKey: key) else { preconditionFailure("ClusterIndex: point missing from its cell") }
        if levels[zoom].values[i].count == 1 {
            // Dropping the cell also drops the rounding error its sums gathered.
            levels[zoom].remove(at: i)
        } else {
            levels[zoom].values[i].count -= 1
            levels[zoom].values[i].latitude -= p.coordinate.latitude
            levels[zoom].values[i].longitude -= p.coordinate.longitude
        }
    }

    mutating func removeMember(_ id: String, _ key: Int) {
        guard let i = members.index(forKey: key) else { return }
        members.values[i].remove(id)
        if members.values[i].isEmpty { members.remove(at: i) }
    }

    // MARK: Queries

    /// The clusters at integer zoom `zoom` (clamped to 0...maxZoom) whose cell
    /// intersects `area`, ordered by cell row, then column: those of
    /// ``cells(covering:zoom:maxZoom:cellPoints:)``.
    public func clusters(zoom: Int, in area: Bounds) -> [Cluster] {
        clusters(in: Self.cells(covering: area, zoom: zoom, maxZoom: maxZoom, cellPoints: cellPoints))
    }

    /// The clusters of the non-empty cells of `range` (taken at the index's grid), ordered by
    /// cell row, then column.
    public func clusters(in range: CellRange) -> [Cluster] {
        let zoom = range.zoom
        let level = levels[zoom]
        guard !level.isEmpty else { return [] }
        let n = cellsAcross(zoom)
        let (row0, row1, col0, col1) = (range.rows.lowerBound, range.rows.upperBound, range.west, range.east)
        let wraps = range.wraps
        let width = range.columnCount

        var result: [Cluster] = []
        if (row1 - row0 + 1) * width < level.count {
            for row in row0...row1 {
                func visit(_ columns: ClosedRange<Int>) {
                    for column in columns {
                        let k = key(row: row, column: column, zoom: zoom)
                        if let sum = level[k] { result.append(cluster(k, sum, zoom: zoom)) }
                    }
                }
                if wraps {
                    visit(0...col1)
                    visit(col0...(n - 1))
                } else {
                    visit(col0...col1)
                }
            }
        } else {
            let rowShift = zoom + shift
            var found: [(key: Int, sum: Sum)] = []
            for (k, sum) in level {
                let row = k >> rowShift, column = k & (n - 1)
                guard row >= row0, row <= row1 else { continue }
                guard wraps ? (column <= col1 || column >= col0) : (column >= col0 && column <= col1) else { continue }
                found.append((k, sum))
            }
            // The key is row-major, so it orders by row, then column.
            found.sort { $0.key < $1.key }
            result.reserveCapacity(found.count)
            for (k, sum) in found { result.append(cluster(k, sum, zoom: zoom)) }
        }
        return result
    }

    /// The cluster of a non-empty cell: walks down while the members share one
    /// child cell, to find where they split or, for one member, its id.
    func cluster(_ key: Int, _ sum: Sum, zoom: Int) -> Cluster {
        var zoom = zoom, key = key
        var row = key >> (zoom + shift), column = key & (cellsAcross(zoom) - 1)
        var splitZoom: Int?
        descent: while zoom < maxZoom {
            let child = zoom + 1
            for childRow in (row * 2)...(row * 2 + 1) {
                for childColumn in (column * 2)...(column * 2 + 1) {
                    let k = self.key(row: childRow, column: childColumn, zoom: child)
                    guard let c = levels[child][k] else { continue }
                    if c.count == sum.count {
                        (zoom, key, row, column) = (child, k, childRow, childColumn)
                        continue descent
                    }
                    splitZoom = child
                    break descent
                }
            }
            preconditionFailure("ClusterIndex: a cell's members are missing from its children")
        }
        if sum.count == 1, zoom == maxZoom, let id = members[key]?.first, let p = points[id] {
            return Cluster(coordinate: p.coordinate, count: 1, annotation: id)
        }
        let mean = Coordinate(latitude: sum.latitude / Double(sum.count), longitude: sum.longitude / Double(sum.count))
        return Cluster(coordinate: mean, count: sum.count, splitZoom: splitZoom)
    }
}
