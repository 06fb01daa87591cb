#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Bounds {
    /// The whole world: latitude -90...90, longitude -180...180.
    public static let world = Bounds(
        southWest: Coordinate(latitude: -90, longitude: -180), northEast: Coordinate(latitude: 90, longitude: 180))

    /// A box that is one coordinate.
    public init(point: Coordinate) {
        self.init(southWest: point, northEast: point)
    }

    /// The smallest box around the coordinates; nil when there are none.
    ///
    /// The box never crosses the antimeridian: coordinates are not wrapped, and
    /// map SDKs draw a line from 179 to -179 across the map, the long way.
    public init?(around coordinates: some Sequence<Coordinate>) {
        var iterator = coordinates.makeIterator()
        guard let first = iterator.next() else { return nil }
        var south = first.latitude, north = first.latitude
        var west = first.longitude, east = first.longitude
        while let c = iterator.next() {
            south = min(south, c.latitude)
            north = max(north, c.latitude)
            west = min(west, c.longitude)
            east = max(east, c.longitude)
        }
        self.init(
            southWest: Coordinate(latitude: south, longitude: west), northEast: Coordinate(latitude: north, longitude: east))
    }

    /// Whether the two boxes share at least one coordinate (edges count).
    ///
    /// Either box may cross the antimeridian; -180 and 180 are one meridian. A
    /// box whose `southWest.longitude` is -180 and `northEast.longitude` is 180
    /// spans all longitudes.
    @inlinable
    public func intersects(_ other: Bounds) -> Bool {
        guard southWest.latitude <= other.northEast.latitude, other.southWest.latitude <= northEast.latitude else {
            return false
        }
        switch (crossesAntimeridian, other.crossesAntimeridian) {
        case (false, false):
            return Bounds.overlap(southWest.longitude, northEast.longitude, other.southWest.longitude, other.northEast.longitude)
        case (true, false):
            return Bounds.overlap(southWest.longitude, 180, other.southWest.longitude, other.northEast.longitude)
                || Bounds.overlap(-180, northEast.longitude, other.southWest.longitude, other.northEast.longitude)
        case (false, true):
            return Bounds.overlap(southWest.longitude, northEast.longitude, other.southWest.longitude, 180)
                || Bounds.overlap(southWest.longitude, northEast.longitude, -180, other.northEast.longitude)
        case (true, true):
            // Both hold the antimeridian.
            return true
        }
    }

    /// Whether two closed longitude intervals meet, counting -180 and 180 as one meridian.
    @usableFromInline
    static func overlap(_ aWest: Double, _ aEast: Double, _ bWest: Double, _ bEast: Double) -> Bool {
        (aWest <= bEast && bWest <= aEast) || (aEast == 180 && bWest == -180) || (aWest == -180 && bEast == 180)
    }
}

extension Annotation {
    /// The annotation's extent: a point's coordinate, or the box around a
    /// polyline's coordinates or a polygon's outer ring (holes lie inside it).
    /// A shape without coordinates, which validation refuses, is the box at 0, 0.
    public var bounds: Bounds {
        switch shape {
        case .point(let p): Bounds(point: p.coordinate)
        case .polyline(let l): Bounds(around: l.coordinates) ?? Bounds(point: Coordinate(latitude: 0, longitude: 0))
        case .polygon(let g): Bounds(around: g.coordinates) ?? Bounds(point: Coordinate(latitude: 0, longitude: 0))
        }
    }

    /// Where clustering counts it: a point's coordinate, or the centre of its bounds.
    public var anchor: Coordinate {
        if case .point(let p) = shape { return p.coordinate }
        let b = bounds
        return Coordinate(
            latitude: (b.southWest.latitude + b.northEast.latitude) / 2,
            longitude: (b.southWest.longitude + b.northEast.longitude) / 2)
    }
}

/// What part of the world a map view shows.
public enum ViewArea {
    /// The part of the world a map view shows, widened by `margin` (a fraction
    /// of the view's width and height added on each side: 0.5 makes the box
    /// twice as wide and tall).
    ///
    /// Web Mercator with 256-point tiles: at zoom z the world is 256 * 2^z
    /// points wide. Bearing: the box around the rotated view. Pitch (clamped
    /// to 0...85): the view's width and height are both multiplied by
    /// 1/cos(pitch), a superset of what a tilted camera sees.
    ///
    /// Latitudes are computed in Mercator y and converted back; beyond the
    /// Mercator limit the box runs to the pole (-90 or 90). Longitudes: when the
    /// width covers 360 degrees or more the box is -180...180; otherwise it is
    /// the centre ± half the width, wrapped into [-180, 180], and the box crosses
    /// the antimeridian when the west edge wraps past the east edge.
    public static func bounds(camera: Camera, viewport: Viewport, margin: Double) -> Bounds {
        let worldPoints = 256 * pow(2, camera.zoom)
        let pitch = min(max(camera.pitch, 0), Geo.maxPitch) * .pi / 180
        let scale = max(0, 1 + 2 * margin) / cos(pitch)
        let width = viewport.width * scale, height = viewport.height * scale
        let bearing = camera.bearing * .pi / 180
        let c = abs(cos(bearing)), s = abs(sin(bearing))
        let boxWidth = width * c + height * s
        let boxHeight = width * s + height * c

        let centerY = Mercator.y(latitude: camera.center.latitude)
        let halfHeight = boxHeight / 2 / worldPoints
        let northY = centerY - halfHeight, southY = centerY + halfHeight
        let north = northY <= 0 ? 90 : Mercator.latitude(y: northY)
        let south = southY >= 1 ? -90 : Mercator.latitude(y: southY)

        let degrees = boxWidth / worldPoints * 360
        let west: Double, east: Double
        if degrees >= 360 {
            (west, east) = (-180, 180)
        } else {
            let center = camera.center.longitude
            let rawEast = center + degrees / 2
            west = Geo.wrapLongitude(center - degrees / 2)
            let wrappedEast = Geo.wrapLongitude(rawEast)
            // An east edge exactly on the antimeridian stays at 180.
            east = wrappedEast == -180 && rawEast > -180 ? 180 : wrappedEast
        }
        return Bounds(
            southWest: Coordinate(latitude: south, longitude: west), northEast: Coordinate(latitude: north, longitude: east))
    }
}
