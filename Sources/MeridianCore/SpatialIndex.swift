/// An index from keys to boxes on a uniform latitude/longitude grid, for
/// finding what lies in a view as cameras and annotations move.
///
/// Cells are `cellDegrees` square (the last row and column may be narrower),
/// keyed by an integer computed from their row and column. An entry is listed
/// in every cell its box covers; a box crossing the antimeridian covers two
/// column ranges. An entry covering more than `maxCellsPerEntry` cells is kept
/// in a separate list instead, checked on every query. Moving an entry within
/// the cells it already covers only replaces its box.
public struct SpatialIndex<Key: Hashable & Sendable>: Sendable {
    @usableFromInline let cellDegrees: Double
    @usableFromInline let maxCellsPerEntry: Int
    @usableFromInline let rows: Int
    @usableFromInline let columns: Int
    @usableFromInline var slotOfKey: [Key: Int32] = [:]
    @usableFromInline var slots: [Slot] = []
    @usableFromInline var freeSlots: [Int32] = []
    /// Cell key -> the slots listed in that cell.
    @usableFromInline var cells: [Int: [Int32]] = [:]
    /// Slots whose boxes cover more than `maxCellsPerEntry` cells.
    @usableFromInline var large: [Int32] = []

    /// One entry (or a free place for one, with a nil key).
    @usableFromInline struct Slot: Sendable {
        @usableFromInline var key: Key?
        @usableFromInline var bounds: Bounds
        @usableFromInline var range: GridRange
        /// Where the slot sits in `large` when it is large, or in its cell's list
        /// when it covers one cell; -1 otherwise.
        @usableFromInline var position: Int32

        @inlinable init(key: Key, bounds: Bounds, range: GridRange) {
            self.key = key
            self.bounds = bounds
            self.range = range
            self.position = -1
        }
    }

    /// `cellDegrees` must be at least a millionth of a degree; `maxCellsPerEntry` at least 1.
    public init(cellDegrees: Double = 1, maxCellsPerEntry: Int = 1024) {
        precondition(cellDegrees.isFinite && cellDegrees >= 1e-6, "cellDegrees must be at least 1e-6")
        precondition(maxCellsPerEntry >= 1, "maxCellsPerEntry must be at least 1")
        self.cellDegrees = cellDegrees
        self.maxCellsPerEntry = maxCellsPerEntry
        rows = Int((180 / cellDegrees).rounded(.up))
        columns = Int((360 / cellDegrees).rounded(.up))
    }

    /// How many entries the index holds.
    @inlinable public var count: Int { slotOfKey.count }

    /// The box of an entry, or nil when there is none for `key`.
    @inlinable public func bounds(of key: Key) -> Bounds? {
        slotOfKey[key].map { slots[Int($0)].bounds }
    }

    /// Inserts or replaces (moves) the entry. Cheap when the new box covers the same cells.
    @inlinable public mutating func insert(_ key: Key, bounds: Bounds) {
        let range = gridRange(of: bounds)
        if let s = slotOfKey[key] {
            let i = Int(s)
            if slots[i].range == range {
                slots[i].bounds = bounds
                return
            }
            unlink(s)
            slots[i].bounds = bounds
            slots[i].range = range
            link(s)
            return
        }
        let s: Int32
        if let free = freeSlots.popLast() {
            s = free
            slots[Int(s)] = Slot(key: key, bounds: bounds, range: range)
        } else {
            precondition(slots.count < Int(Int32.max), "SpatialIndex is full")
            s = Int32(slots.count)
            slots.append(Slot(key: key, bounds: bounds, range: range))
        }
        slotOfKey[key] = s
        link(s)
    }

    /// Removes the entry; nothing happens when there is none.
    @inlinable public mutating func remove(_ key: Key) {
        guard let s = slotOfKey.removeValue(forKey: key) else { return }
        unlink(s)
        slots[Int(s)].key = nil
        freeSlots.append(s)
    }

    /// Calls `body` once for each key whose box intersects `area` (by
    /// `Bounds.intersects`). The grid narrows the candidates; a query covering
    /// more cells than there are entries checks every entry instead.
    @inlinable public func forEach(intersecting area: Bounds, _ body: (Key) -> Void) {
        guard !slotOfKey.isEmpty else { return }
        let query = queryRange(of: area)
        if query.cellCount(columns: columns) > slotOfKey.count {
            for slot in slots where slot.key != nil && slot.bounds.intersects(area) {
                body(slot.key!)
            }
            return
        }
        for s in large where slots[Int(s)].bounds.intersects(area) {
            body(slots[Int(s)].key!)
        }
        func visit(row: Int, columns range: ClosedRange<Int>) {
            for column in range {
                guard let list = cells[row &* columns &+ column] else { continue }
                for s in list {
                    let r = slots[Int(s)].range
                    // An entry in several cells is reported from the first cell
                    // its range shares with the query's.
                    if !r.isOneCell {
                        guard row == max(Int(r.row0), Int(query.row0)),
                            column == r.firstCommonColumn(with: query, columns: columns)
                        else { continue }
                    }
                    if slots[Int(s)].bounds.intersects(area) { body(slots[Int(s)].key!) }
                }
            }
        }
        for row in Int(query.row0)...Int(query.row1) {
            if query.col0 <= query.col1 {
                visit(row: row, columns: Int(query.col0)...Int(query.col1))
            } else {
                visit(row: row, columns: 0...Int(query.col1))
                visit(row: row, columns: Int(query.col0)...(columns - 1))
            }
        }
    }

    /// The keys whose boxes intersect `area`, each once, in no particular order.
    @inlinable public func keys(intersecting area: Bounds) -> [Key] {
        var keys: [Key] = []
        forEach(intersecting: area) { keys.append($0) }
        return keys
    }
}

// MARK: Cells

/// Rows row0...row1 and columns col0...col1, or, when col0 > col1, the two
/// column ranges 0...col1 and col0...(columns - 1).
@usableFromInline struct GridRange: Hashable, Sendable {
    @usableFromInline var row0: Int32
    @usableFromInline var row1: Int32
    @usableFromInline var col0: Int32
    @usableFromInline var col1: Int32

    @inlinable init(row0: Int, row1: Int, col0: Int, col1: Int) {
        self.row0 = Int32(row0)
        self.row1 = Int32(row1)
        self.col0 = Int32(col0)
        self.col1 = Int32(col1)
    }

    @inlinable var isOneCell: Bool { row0 == row1 && col0 == col1 }

    @inlinable func cellCount(columns: Int) -> Int {
        let width = col0 <= col1 ? Int(col1 - col0) + 1 : Int(col1) + 1 + columns - Int(col0)
        return (Int(row1 - row0) + 1) * width
    }

    /// The lowest column in both ranges (which must share one).
    @inlinable func firstCommonColumn(with other: GridRange, columns: Int) -> Int {
        let last = Int32(columns - 1)
        // Each side as two intervals; an empty one has lo > hi.
        let a = col0 <= col1 ? (col0, col1, Int32(1), Int32(0)) : (Int32(0), col1, col0, last)
        let b = other.col0 <= other.col1 ? (other.col0, other.col1, Int32(1), Int32(0)) : (Int32(0), other.col1, other.col0, last)
        var first = Int32.max
        @inline(__always) func meet(_ lo1: Int32, _ hi1: Int32, _ lo2: Int32, _ hi2: Int32) {
            let lo = max(lo1, lo2)
            if lo <= min(hi1, hi2) { first = min(first, lo) }
        }
        meet(a.0, a.1, b.0, b.1)
        meet(a.0, a.1, b.2, b.3)
        meet(a.2, a.3, b.0, b.1)
        meet(a.2, a.3, b.2, b.3)
        return Int(first)
    }
}

extension SpatialIndex {
    @inlinable static func index(_ value: Double, _ count: Int) -> Int {
        let i = value.rounded(.down)
        guard i >= 0 else { return 0 }
        guard i < Double(count) else { return count - 1 }
        return Int(i)
    }

    @inlinable func row(_ latitude: Double) -> Int { Self.index((latitude + 90) / cellDegrees, rows) }
    @inlinable func column(_ longitude: Double) -> Int { Self.index((longitude + 180) / cellDegrees, columns) }

    /// Columns from col0 eastwards round to col1; all of them when the two meet.
    @inlinable func wrapping(_ col0: Int, _ col1: Int) -> (Int, Int) {
        col1 >= col0 - 1 ? (0, columns - 1) : (col0, col1)
    }

    /// The cells an entry's box covers.
    @inlinable func gridRange(of b: Bounds) -> GridRange {
        let south = min(b.southWest.latitude, b.northEast.latitude)
        let north = max(b.southWest.latitude, b.northEast.latitude)
        let west = column(b.southWest.longitude), east = column(b.northEast.longitude)
        let (col0, col1) = b.crossesAntimeridian ? wrapping(west, east) : (west, east)
        return GridRange(row0: row(south), row1: row(north), col0: col0, col1: col1)
    }

    /// The cells a query covers: an entry's, plus the first column when the box
    /// reaches longitude 180 and the last when it reaches -180 (one meridian).
    @inlinable func queryRange(of b: Bounds) -> GridRange {
        var r = gridRange(of: b)
        guard !b.crossesAntimeridian, r.col0 <= r.col1 else { return r }
        var (col0, col1) = (Int(r.col0), Int(r.col1))
        let reachesEast = b.northEast.longitude >= 180 && col0 > 0
        let reachesWest = b.southWest.longitude <= -180 && col1 < columns - 1
        if reachesEast && reachesWest {
            (col0, col1) = (0, columns - 1)
        } else if reachesEast {
            (col0, col1) = wrapping(col0, 0)
        } else if reachesWest {
            (col0, col1) = wrapping(columns - 1, col1)
        }
        r.col0 = Int32(col0)
        r.col1 = Int32(col1)
        return r
    }

    @inlinable func isLarge(_ r: GridRange) -> Bool { r.cellCount(columns: columns) > maxCellsPerEntry }

    /// Calls `body` with the key of each cell in the range. Static, so that a `body` that
    /// changes the index does not find its storage shared with a copy held by the call (which
    /// would copy the whole cell table on every change).
    @inlinable static func forEachCell(_ r: GridRange, columns: Int, _ body: (Int) -> Void) {
        for row in Int(r.row0)...Int(r.row1) {
            let base = row &* columns
            if r.col0 <= r.col1 {
                for column in Int(r.col0)...Int(r.col1) { body(base &+ column) }
            } else {
                for column in 0...Int(r.col1) { body(base &+ column) }
                for column in Int(r.col0)..<columns { body(base &+ column) }
            }
        }
    }

    /// Lists the slot where its range says.
    @inlinable mutating func link(_ s: Int32) {
        let i = Int(s)
        let range = slots[i].range
        if isLarge(range) {
            slots[i].position = Int32(large.count)
            large.append(s)
            return
        }
        var position: Int32 = -1
        Self.forEachCell(range, columns: columns) { key in
            position = Int32(cells[key, default: []].count)
            cells[key, default: []].append(s)
        }
        slots[i].position = range.isOneCell ? position : -1
    }

    /// Takes the slot out of the lists its range says.
    @inlinable mutating func unlink(_ s: Int32) {
        let i = Int(s)
        let range = slots[i].range
        if isLarge(range) {
            let position = Int(slots[i].position)
            let last = large.removeLast()
            if position < large.count {
                large[position] = last
                slots[Int(last)].position = Int32(position)
            }
            return
        }
        let known = range.isOneCell ? Int(slots[i].position) : -1
        Self.forEachCell(range, columns: columns) { key in
            guard let d = cells.index(forKey: key) else { preconditionFailure("SpatialIndex: slot missing from its cell") }
            let position = known >= 0 ? known : cells.values[d].firstIndex(of: s)!
            let last = cells.values[d].removeLast()
            if position < cells.values[d].count {
                cells.values[d][position] = last
                if slots[Int(last)].range.isOneCell { slots[Int(last)].position = Int32(position) }
            } else if cells.values[d].isEmpty {
                cells.remove(at: d)
            }
        }
        slots[i].position = -1
    }
}
