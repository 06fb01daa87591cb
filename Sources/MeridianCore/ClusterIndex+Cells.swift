extension ClusterIndex {
    /// The grid every session clusters on: 64-point cells, zoom 0 to 16.
    public static let defaultMaxZoom = 16
    /// The side of that grid's cells, in points.
    public static let defaultCellPoints = 64

    /// A block of grid cells at one zoom: what a clustering view counts. Its ``bounds`` are the
    /// cells' outer edges, so every annotation counted in one of its clusters lies inside them.
    public struct CellRange: Hashable, Sendable {
        /// The grid's zoom (the view's integer zoom, at most the grid's deepest).
        public let zoom: Int
        /// Cells across (and down) at `zoom`.
        public let count: Int
        /// The block's rows, north to south (row 0 is the top of the Mercator world).
        public let rows: ClosedRange<Int>
        /// The westmost and eastmost columns; `west > east` when the block crosses the antimeridian.
        public let west: Int
        /// The eastmost column (less than `west` when the block crosses the antimeridian).
        public let east: Int

        var wraps: Bool { west > east }
        var columnCount: Int { wraps ? east + 1 + count - west : east - west + 1 }

        /// The cells' outer edges: a block that holds the first or last row runs to the pole
        /// (points beyond the Mercator limit fall in those rows), one that holds every column
        /// spans -180...180, and one whose west column lies east of its east column crosses the
        /// antimeridian.
        public var bounds: Bounds {
            let n = Double(count)
            let north = rows.lowerBound == 0 ? 90 : Mercator.latitude(y: Double(rows.lowerBound) / n)
            let south = rows.upperBound == count - 1 ? -90 : Mercator.latitude(y: Double(rows.upperBound + 1) / n)
            let westLongitude: Double, eastLongitude: Double
            if columnCount >= count {
                (westLongitude, eastLongitude) = (-180, 180)
            } else {
                westLongitude = Double(west) / n * 360 - 180
                eastLongitude = Double(east + 1) / n * 360 - 180
            }
            return Bounds(
                southWest: Coordinate(latitude: south, longitude: westLongitude),
                northEast: Coordinate(latitude: north, longitude: eastLongitude))
        }
    }

    /// The cells at `zoom` (clamped to 0...maxZoom) that `area` touches, on the grid of
    /// `cellPoints`-point cells.
    ///
    /// The area's edges pick cells as points do: an edge on a cell boundary takes the cell east
    /// or south of it; latitudes beyond the Mercator limit take the edge rows; an area crossing
    /// the antimeridian takes columns from its west edge to the last and from the first to its
    /// east edge.
    public static func cells(
        covering area: Bounds, zoom: Int, maxZoom: Int = defaultMaxZoom, cellPoints: Int = defaultCellPoints
    ) -> CellRange {
        let zoom = min(max(zoom, 0), maxZoom)
        let n = 1 << (zoom + (256 / cellPoints).trailingZeroBitCount)
        let north = max(area.southWest.latitude, area.northEast.latitude)
        let south = min(area.southWest.latitude, area.northEast.latitude)
        let row0 = Mercator.cell(Mercator.y(latitude: north), count: n)
        let row1 = Mercator.cell(Mercator.y(latitude: south), count: n)
        var col0 = Mercator.cell(Mercator.x(longitude: area.southWest.longitude), count: n)
        var col1 = Mercator.cell(Mercator.x(longitude: area.northEast.longitude), count: n)
        // Crossing the antimeridian: 0...col1 and col0..<n, or every column when those meet.
        if area.crossesAntimeridian && col1 >= col0 - 1 { (col0, col1) = (0, n - 1) }
        return CellRange(zoom: zoom, count: n, rows: row0...row1, west: col0, east: col1)
    }
}
