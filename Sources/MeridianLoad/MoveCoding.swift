/// How a drag move's coordinate carries the move's number within its drag (latitude) and its send
/// time (longitude), so every receiver counts the moves it missed and measures latency without a
/// lookup. Both are offsets from an origin: (0, 0) with wide steps when every client sees
/// everything; the dragged annotation's city on a big map, with steps small enough that the
/// annotation stays well inside the city's view.
struct MoveCoding {
    let origin: GeoPoint
    /// Moves per degree of latitude.
    let movesPerDegree: Double
    /// Send-time microseconds per degree of longitude (send times wrap every ``LoadClock/wrap``).
    let microsPerDegree: Double

    /// Latitude move / 1000 (up to ``MoveCounter/maxMoves``), longitude the send time in seconds, in [0, 100).
    static let world = MoveCoding(origin: GeoPoint(latitude: 0, longitude: 0), movesPerDegree: 1_000, microsPerDegree: 1_000_000)

    /// The most moves per drag around a city: their latitudes stay within 0.01° of it.
    static let maxCityMoves = 1_000

    init(origin: GeoPoint, movesPerDegree: Double, microsPerDegree: Double) {
        self.origin = origin
        self.movesPerDegree = movesPerDegree
        self.microsPerDegree = microsPerDegree
    }

    /// Around a city: ``maxCityMoves`` moves within 0.01° of latitude, send times within 0.1° of
    /// longitude (microsecond resolution all the same).
    init(city: GeoPoint) {
        self.init(origin: city, movesPerDegree: 100_000, microsPerDegree: Double(LoadClock.wrap) / 0.1)
    }

    func latitude(move: Int) -> Double { origin.latitude + Double(move) / movesPerDegree }

    func move(latitude: Double) -> Int32 { Int32(((latitude - origin.latitude) * movesPerDegree).rounded()) }

    /// A longitude carrying `micros` (modulo the wrap) exactly, at microsecond resolution.
    func longitude(sentAt micros: UInt64) -> Double { origin.longitude + Double(micros % LoadClock.wrap) / microsPerDegree }

    /// Microseconds between the send time carried by `longitude` and `now`.
    func latency(longitude: Double, now: UInt64) -> UInt64? {
        let offset = (longitude - origin.longitude) * microsPerDegree
        guard offset >= 0, offset < Double(LoadClock.wrap) else { return nil }
        let sent = UInt64(offset.rounded()) % LoadClock.wrap
        return (now % LoadClock.wrap + LoadClock.wrap - sent) % LoadClock.wrap
    }
}
