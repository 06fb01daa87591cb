#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
@testable import MeridianCore

/// Mercator y of a latitude in radians of the projection (north positive).
func mercatorY(_ latitude: Double) -> Double {
    let phi = latitude * .pi / 180
    return log(tan(.pi / 4 + phi / 2))
}

/// The box's height in points at a zoom.
func heightInPoints(_ b: Bounds, zoom: Double) -> Double {
    (mercatorY(b.northEast.latitude) - mercatorY(b.southWest.latitude)) / (2 * .pi) * 256 * pow(2, zoom)
}

/// The box's width in degrees, the way east from its west edge.
func widthInDegrees(_ b: Bounds) -> Double {
    let w = b.northEast.longitude - b.southWest.longitude
    return b.crossesAntimeridian ? w + 360 : w
}

@Suite struct ViewAreaTests {
    static let london = C(51.5074, -0.1278)
    static let view = Viewport(width: 1024, height: 768)
    /// 1024 points at zoom 10: 360 * 1024 / (256 * 2^10) degrees.
    static let width10 = 1.40625
    static let height10 = 360.0 * 768 / (256 * 1024)

    func area(_ camera: Camera, _ viewport: Viewport = view, margin: Double = 0) -> Bounds {
        ViewArea.bounds(camera: camera, viewport: viewport, margin: margin)
    }

    @Test func zoomZeroWithOneTileSeesTheWholeWorld() {
        #expect(area(cam(0, 0, zoom: 0), Viewport(width: 256, height: 256)) == .world)
    }

    @Test func londonAtZoomTen() {
        let b = area(cam(Self.london.latitude, Self.london.longitude, zoom: 10))
        #expect(!b.crossesAntimeridian)
        #expect(abs(widthInDegrees(b) - Self.width10) < 1e-9)
        #expect(abs((b.southWest.longitude + b.northEast.longitude) / 2 - Self.london.longitude) < 1e-9)
        #expect(abs(heightInPoints(b, zoom: 10) - 768) < 1e-6)
        // Centred in Mercator y, so north of the centre by less than it runs south.
        let up = b.northEast.latitude - Self.london.latitude, down = Self.london.latitude - b.southWest.latitude
        #expect(up > 0 && down > 0 && up < down)
        #expect(abs(mercatorY(b.northEast.latitude) + mercatorY(b.southWest.latitude) - 2 * mercatorY(Self.london.latitude)) < 1e-9)
    }

    @Test func cameraNearTheAntimeridianGivesACrossingBox() {
        let b = area(cam(0, 179.9, zoom: 10))
        #expect(b.crossesAntimeridian)
        #expect(abs(b.southWest.longitude - (179.9 - Self.width10 / 2)) < 1e-9)
        #expect(abs(b.northEast.longitude - (179.9 + Self.width10 / 2 - 360)) < 1e-9)
        #expect(abs(widthInDegrees(b) - Self.width10) < 1e-9)
        let west = area(cam(0, -179.9, zoom: 10))
        #expect(west.crossesAntimeridian)
        #expect(abs(west.southWest.longitude - (-179.9 - Self.width10 / 2 + 360)) < 1e-9)
    }

    @Test func anEastEdgeOnTheAntimeridianStaysAt180() {
        let b = area(cam(0, 90, zoom: 0), Viewport(width: 128, height: 128))
        #expect(b.southWest.longitude == 0)
        #expect(b.northEast.longitude == 180)
    }

    @Test func aViewWiderThanTheWorldSpansAllLongitudes() {
        let b = area(cam(10, 100, zoom: 1), Viewport(width: 600, height: 100))
        #expect(b.southWest.longitude == -180)
        #expect(b.northEast.longitude == 180)
        #expect(b.southWest.latitude > -90 && b.northEast.latitude < 90)
    }

    @Test func aCameraNearThePoleReachesIt() {
        let north = area(cam(85, 30, zoom: 3))
        #expect(north.northEast.latitude == 90)
        #expect(north.southWest.latitude < 85 && north.southWest.latitude > 0)
        let south = area(cam(-85, 30, zoom: 3))
        #expect(south.southWest.latitude == -90)
        #expect(south.northEast.latitude > -85 && south.northEast.latitude < 0)
    }

    @Test func marginHalfDoublesWidthAndHeight() {
        let plain = area(cam(Self.london.latitude, Self.london.longitude, zoom: 10))
        let wide = area(cam(Self.london.latitude, Self.london.longitude, zoom: 10), margin: 0.5)
        #expect(abs(widthInDegrees(wide) - 2 * widthInDegrees(plain)) < 1e-9)
        #expect(abs(heightInPoints(wide, zoom: 10) - 2 * 768) < 1e-6)
        #expect(wide.southWest.latitude < plain.southWest.latitude && wide.northEast.latitude > plain.northEast.latitude)
    }

    @Test func bearingNinetySwapsWidthAndHeight() {
        let b = area(cam(0, 0, zoom: 10, bearing: 90))
        #expect(abs(widthInDegrees(b) - Self.height10) < 1e-9)
        #expect(abs(heightInPoints(b, zoom: 10) - 1024) < 1e-6)
        let diagonal = area(cam(0, 0, zoom: 10, bearing: 45))
        let side = (1024 + 768) / 2.0.squareRoot()
        #expect(abs(heightInPoints(diagonal, zoom: 10) - side) < 1e-6)
        #expect(abs(widthInDegrees(diagonal) - 360 * side / (256 * 1024)) < 1e-9)
    }

    @Test func pitchLengthensBothSides() {
        let b = area(cam(0, 0, zoom: 10, pitch: 60))
        #expect(abs(widthInDegrees(b) - 2 * Self.width10) < 1e-9)
        #expect(abs(heightInPoints(b, zoom: 10) - 2 * 768) < 1e-6)
        let steep = area(cam(0, 0, zoom: 10, pitch: 85))
        #expect(widthInDegrees(steep) > 11 * Self.width10)
    }
}
