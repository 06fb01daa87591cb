#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Web Mercator in world units: x runs 0 (longitude -180) to 1 (180) eastwards,
/// y runs 0 (latitude 85.0511...) to 1 (-85.0511...) southwards.
enum Mercator {
    static func x(longitude: Double) -> Double {
        (longitude + 180) / 360
    }

    /// The y of a latitude clamped to `Geo.maxMercatorLatitude`.
    static func y(latitude: Double) -> Double {
        let lat = min(max(latitude, -Geo.maxMercatorLatitude), Geo.maxMercatorLatitude)
        let s = sin(lat * .pi / 180)
        return 0.5 - 0.25 * log((1 + s) / (1 - s)) / .pi
    }

    /// The latitude at y; y outside 0...1 gives latitudes beyond the Mercator limit.
    static func latitude(y: Double) -> Double {
        atan(sinh(.pi * (1 - 2 * y))) * 180 / .pi
    }

    /// The index of the cell of `count` equal cells across 0...1 that holds `t`;
    /// out-of-range and NaN values land in the first or last cell.
    static func cell(_ t: Double, count: Int) -> Int {
        let c = (t * Double(count)).rounded(.down)
        guard c >= 0 else { return 0 }
        guard c < Double(count) else { return count - 1 }
        return Int(c)
    }
}
