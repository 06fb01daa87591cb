import Foundation

/// A point on the globe, in degrees.
struct GeoPoint: Equatable {
    var latitude: Double
    var longitude: Double
}

/// The cities of a big map (`--interest viewport`): client rank `i` of every session lives in
/// city `i` of `count`, points spread evenly over the globe between ±70° latitude (a golden-angle
/// spiral on the sphere). Neighbouring cities lie far apart (about 6° for 1,000 cities), much
/// farther than a view at zoom 12 reaches with its margin (well under 1°), so a client's area
/// holds its own city only. Longitudes keep 1° off the antimeridian.
struct Cities {
    let count: Int

    static let maxLatitude = 70.0
    /// The radius, in degrees, of the disc around a city centre that its seeded annotations fill.
    static let seedRadius = 0.04
    /// The golden angle as a fraction of a turn (2 - φ).
    static let goldenTurn = (3 - 5.0.squareRoot()) / 2

    init(count: Int) { self.count = max(count, 1) }

    /// One city per client rank of a session.
    init(_ c: LoadConfiguration) { self.init(count: (c.clients + c.sessions - 1) / max(c.sessions, 1)) }

    func centre(_ i: Int) -> GeoPoint {
        let n = Double(i % count)
        let z = sin(Self.maxLatitude * .pi / 180) * (1 - 2 * (n + 0.5) / Double(count))
        let turn = (n * Self.goldenTurn).truncatingRemainder(dividingBy: 1)
        return GeoPoint(latitude: asin(z) * 180 / .pi, longitude: -179 + turn * 358)
    }

    /// Annotation `k` of the `perCity` seeded around city `i`: a golden-angle spiral filling a
    /// disc of ``seedRadius`` around the centre.
    func seed(_ k: Int, of perCity: Int, around i: Int) -> GeoPoint {
        let c = centre(i)
        let r = Self.seedRadius * ((Double(k) + 0.5) / Double(max(perCity, 1))).squareRoot()
        let angle = Double(k) * Self.goldenTurn * 2 * .pi
        return GeoPoint(latitude: c.latitude + r * sin(angle), longitude: c.longitude + r * cos(angle))
    }

    /// Where seeded annotation `n` of `total` lies: cities take turns (`n % count`), so each holds
    /// `total / count` of them (one more for the first `total % count`).
    func seedLocation(_ n: Int, of total: Int) -> GeoPoint {
        let perCity = (total + count - 1) / count
        return seed(n / count, of: perCity, around: n % count)
    }

    /// The city of seeded annotation `n`.
    func city(ofSeed n: Int) -> Int { n % count }
}
