import Foundation
import Testing

@testable import MeridianLoad

@Suite("a big map's cities and the moves dragged around them")
struct CitiesTests {
    /// Great-circle distance in degrees.
    private func degrees(_ a: GeoPoint, _ b: GeoPoint) -> Double {
        let r = Double.pi / 180
        let c = sin(a.latitude * r) * sin(b.latitude * r) + cos(a.latitude * r) * cos(b.latitude * r) * cos((a.longitude - b.longitude) * r)
        return acos(min(1, max(-1, c))) / r
    }

    @Test func thousandCitiesLieWithinSeventyDegreesAndFarApart() {
        let cities = Cities(count: 1000)
        let centres = (0..<1000).map(cities.centre)
        #expect(centres.allSatisfy { abs($0.latitude) <= 70 && abs($0.longitude) <= 179 })
        var nearest = Double.infinity
        for i in centres.indices {
            for j in centres.indices where j > i { nearest = min(nearest, degrees(centres[i], centres[j])) }
        }
        // A view at zoom 12 with margin 0.5 spans at most 0.71° of longitude.
        #expect(nearest > 5, "nearest cities \(nearest)° apart")
        #expect(cities.centre(1003) == cities.centre(3), "indices wrap around the lattice")
    }

    @Test func seedsFillTheirCityAndCitiesTakeTurns() {
        let cities = Cities(count: 7)
        let total = 700
        var perCity = [Int](repeating: 0, count: 7)
        for n in 0..<total {
            let city = cities.city(ofSeed: n)
            perCity[city] += 1
            #expect(degrees(cities.seedLocation(n, of: total), cities.centre(city)) <= Cities.seedRadius * 1.01)
        }
        #expect(perCity == [Int](repeating: 100, count: 7))
        let seeds = Set((0..<total).map { cities.seedLocation($0, of: total).latitude })
        #expect(seeds.count == total, "no two seeds at one place")
    }

    @Test func aMoveAroundACityCarriesItsNumberAndSendTime() {
        let city = GeoPoint(latitude: -69.8, longitude: 178.9)
        let coding = MoveCoding(city: city)
        let sent: UInt64 = 123_456_789_012
        for move in [1, 2, 59, MoveCoding.maxCityMoves] {
            let lat = coding.latitude(move: move)
            #expect(coding.move(latitude: lat) == Int32(move))
            #expect(abs(lat - city.latitude) <= 0.01 + 1e-9)
        }
        let lon = coding.longitude(sentAt: sent)
        #expect(lon >= city.longitude && lon < city.longitude + 0.1)
        #expect(coding.latency(longitude: lon, now: sent + 2_345) == 2_345)
        #expect(MoveCoding.world.latency(longitude: MoveCoding.world.longitude(sentAt: sent), now: sent + 7) == 7)
    }
}
