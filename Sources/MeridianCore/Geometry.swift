/// A geographic coordinate in degrees (WGS 84).
public struct Coordinate: Hashable, Sendable {
    /// Degrees north of the equator (negative south), −90…90.
    public var latitude: Double
    /// Degrees east of Greenwich (negative west), −180…180.
    public var longitude: Double
    /// Builds a coordinate from a latitude and a longitude in degrees.
    public init(latitude: Double, longitude: Double) {
        self.latitude = latitude
        self.longitude = longitude
    }
}

/// A camera looking at the map: centre, zoom level, pitch (degrees from
/// vertical) and bearing (degrees clockwise from north).
public struct Camera: Hashable, Sendable {
    /// The coordinate at the centre of the view.
    public var center: Coordinate
    /// Zoom level of 256-point tiles, 0–24: the world is 256 · 2^zoom points wide.
    public var zoom: Double
    /// Tilt in degrees from vertical, 0–85.
    public var pitch: Double
    /// Heading in degrees clockwise from north; applied in [0, 360).
    public var bearing: Double
    /// Builds a camera; pitch and bearing default to 0 (looking straight down, north up).
    public init(center: Coordinate, zoom: Double, pitch: Double = 0, bearing: Double = 0) {
        self.center = center
        self.zoom = zoom
        self.pitch = pitch
        self.bearing = bearing
    }
}

/// The size of a participant's map view, in points.
public struct Viewport: Hashable, Sendable {
    /// The view's width in points (1–100 000).
    public var width: Double
    /// The view's height in points (1–100 000).
    public var height: Double
    /// Builds a viewport of the given size in points.
    public init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }
}

/// A screen offset in points (x to the right, y down).
public struct Offset: Hashable, Sendable {
    /// Horizontal shift in points, positive to the right.
    public var dx: Double
    /// Vertical shift in points, positive downwards.
    public var dy: Double
    /// No shift.
    public static let zero = Offset(dx: 0, dy: 0)
    /// Builds an offset from its two shifts, in points.
    public init(dx: Double, dy: Double) {
        self.dx = dx
        self.dy = dy
    }
}

/// A south-west / north-east box. When `southWest.longitude` is greater than
/// `northEast.longitude` the box crosses the antimeridian.
public struct Bounds: Hashable, Sendable {
    /// The south-west corner: the southern latitude and the western edge's longitude.
    public var southWest: Coordinate
    /// The north-east corner: the northern latitude and the eastern edge's longitude.
    public var northEast: Coordinate
    /// Builds a box from its corners; a west longitude greater than the east one crosses the antimeridian.
    public init(southWest: Coordinate, northEast: Coordinate) {
        self.southWest = southWest
        self.northEast = northEast
    }

    /// Whether the box crosses the antimeridian: its west longitude is greater than its east one.
    public var crossesAntimeridian: Bool { southWest.longitude > northEast.longitude }

    /// Whether `c` lies inside the box, edges included; -180 and 180 count as one meridian.
    public func contains(_ c: Coordinate) -> Bool {
        guard c.latitude >= southWest.latitude, c.latitude <= northEast.latitude else { return false }
        return containsLongitude(c.longitude)
    }

    /// -180 and 180 are one meridian: a box ending at either edge holds both.
    func containsLongitude(_ lon: Double) -> Bool {
        func inside(_ lon: Double) -> Bool {
            crossesAntimeridian
                ? (lon >= southWest.longitude || lon <= northEast.longitude)
                : (lon >= southWest.longitude && lon <= northEast.longitude)
        }
        return inside(lon) || (abs(lon) == 180 && inside(-lon))
    }

    /// The nearest coordinate inside the box.
    public func clamp(_ c: Coordinate) -> Coordinate {
        let lat = min(max(c.latitude, southWest.latitude), northEast.latitude)
        guard !containsLongitude(c.longitude) else { return Coordinate(latitude: lat, longitude: c.longitude) }
        // Outside in longitude: snap to whichever edge is nearer around the globe.
        let toWest = Geo.angularDistance(c.longitude, southWest.longitude)
        let toEast = Geo.angularDistance(c.longitude, northEast.longitude)
        return Coordinate(latitude: lat, longitude: toWest <= toEast ? southWest.longitude : northEast.longitude)
    }
}

/// Numeric limits and helpers shared by validation.
public enum Geo {
    /// The largest latitude Web Mercator can show.
    public static let maxMercatorLatitude = 85.0511
    /// The highest camera zoom accepted (in zoom levels of 256-point tiles).
    public static let maxZoom = 24.0
    /// The largest camera pitch accepted, in degrees from vertical.
    public static let maxPitch = 85.0

    /// Wraps a longitude into [-180, 180).
    public static func wrapLongitude(_ lon: Double) -> Double {
        // In-range values are returned as they are: the arithmetic below
        // would perturb their last bits.
        if lon >= -180 && lon < 180 { return lon }
        var l = (lon + 180).truncatingRemainder(dividingBy: 360)
        if l < 0 { l += 360 }
        return l - 180
    }

    /// Wraps a bearing into [0, 360).
    public static func wrapBearing(_ b: Double) -> Double {
        if b >= 0 && b < 360 { return b }
        var r = b.truncatingRemainder(dividingBy: 360)
        if r < 0 { r += 360 }
        return r == 360 ? 0 : r
    }

    /// Degrees between two longitudes the short way round.
    static func angularDistance(_ a: Double, _ b: Double) -> Double {
        let d = abs(wrapLongitude(a) - wrapLongitude(b))
        return min(d, 360 - d)
    }
}
