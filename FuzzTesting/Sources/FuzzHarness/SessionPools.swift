import MeridianCore

/// Small fixed pools the session fuzzer draws parameters from, so commands
/// collide often: few ids, a few coordinates (edges and invalid ones included).
enum Pools {
    static let ids = ["a", "b", "c"]

    static let coordinates = [
        Coordinate(latitude: 10, longitude: 20), Coordinate(latitude: -33.9, longitude: 151.2),
        Coordinate(latitude: 90, longitude: 180), Coordinate(latitude: -90, longitude: -180),
        Coordinate(latitude: 0, longitude: 0), Coordinate(latitude: 91, longitude: 0),
        Coordinate(latitude: 0, longitude: 180.5), Coordinate(latitude: .nan, longitude: 0),
    ]

    static func annotation(_ id: String, _ r: inout ByteReader) -> Annotation {
        let c = r.pick(from: coordinates)
        switch r.pick(7) {
        case 0: return Annotation(id: id, shape: .point(Point(coordinate: c, draggable: true, canShowCallout: true)), title: "Pin")
        case 1: return Annotation(id: id, shape: .point(Point(coordinate: c, draggable: true)))
        case 2: return Annotation(id: id, shape: .point(Point(coordinate: c, canShowCallout: true)), title: "Fixed")
        case 3: return Annotation(id: id, shape: .point(Point(coordinate: c, draggable: true)), enabled: false)
        case 4: return Annotation(id: id, shape: .polyline(Polyline(coordinates: [c, coordinates[0]])))
        case 5: return Annotation(id: id, shape: .polygon(Polygon(coordinates: [c, coordinates[1], coordinates[4]])))
        default: return Annotation(id: id, shape: .point(Point(coordinate: c, calloutOffset: Offset(dx: 20_000, dy: 0))))
        }
    }

    static func patch(_ r: inout ByteReader) -> AnnotationPatch {
        var p = AnnotationPatch()
        switch r.pick(12) {
        case 0: p.coordinate = r.pick(from: coordinates)
        case 1: p.draggable = false
        case 2: p.draggable = true
        case 3: p.enabled = false
        case 4: p.enabled = true
        case 5: p.title = .some(nil)
        case 6: p.title = "Titled"; p.canShowCallout = true
        case 7: p.canShowCallout = false
        case 8: p.lineWidth = 5
        case 9: p.coordinates = [coordinates[0], coordinates[1], r.pick(from: coordinates)]
        case 10: p.zIndex = 3; p.enabled = r.bool()
        default: break
        }
        return p
    }

    static let cameras = [
        Camera(center: Coordinate(latitude: 10, longitude: 20), zoom: 10),
        Camera(center: Coordinate(latitude: 89, longitude: 200), zoom: 3, pitch: 40, bearing: 370),
        Camera(center: Coordinate(latitude: -86, longitude: -180), zoom: 0, bearing: -0.0),
        Camera(center: Coordinate(latitude: 5, longitude: 179.999), zoom: 24, pitch: 85, bearing: 359.9),
        Camera(center: Coordinate(latitude: 0, longitude: 0), zoom: 30),
        Camera(center: Coordinate(latitude: 100, longitude: 0), zoom: 1),
    ]

    static func constraints(_ r: inout ByteReader) -> CameraConstraints {
        let policy: ConstraintPolicy = r.bool() ? .clamp : .reject
        switch r.pick(6) {
        case 0: return CameraConstraints(policy: policy)
        case 1: return CameraConstraints(bounds: Bounds(southWest: .init(latitude: 0, longitude: 170), northEast: .init(latitude: 10, longitude: -170)), policy: policy)
        case 2: return CameraConstraints(bounds: Bounds(southWest: .init(latitude: 86, longitude: 179), northEast: .init(latitude: 90, longitude: 180)), policy: policy)
        case 3: return CameraConstraints(minZoom: 5, maxZoom: 6, policy: policy)
        case 4: return CameraConstraints(maxPitch: 10, policy: policy)
        default: return CameraConstraints(minZoom: 7, maxZoom: 6, policy: policy)
        }
    }

    static func settings(_ r: inout ByteReader) -> SettingsPatch {
        var p = SettingsPatch()
        switch r.pick(6) {
        case 0, 1: p.dragPolicy = r.pick(from: DragPolicy.allCases)
        case 2: p.leaseTimeout = r.pick(from: [.seconds(1), .milliseconds(50), .seconds(10)])
        case 3: p.constraints = constraints(&r)
        case 4: p.tint = Color(red: 1, green: 2, blue: 3)
        default: p.dragPolicy = r.pick(from: DragPolicy.allCases); p.constraints = constraints(&r)
        }
        return p
    }

    static func location(_ r: inout ByteReader) -> UserLocation? {
        switch r.pick(5) {
        case 0: return UserLocation(coordinate: coordinates[0], accuracy: 5, heading: 90, tracking: .follow)
        case 1: return UserLocation(coordinate: Coordinate(latitude: 51.5, longitude: -0.12), accuracy: 10, heading: 5, course: 7, authorization: .reduced)
        case 2: return UserLocation(coordinate: Coordinate(latitude: 89.99, longitude: 179.99), accuracy: 1, authorization: .reduced)
        case 3: return UserLocation(coordinate: coordinates[0], accuracy: -1)
        default: return nil
        }
    }

    static let mapLoads = [
        MapLoad(state: .loading), MapLoad(state: .loaded), MapLoad(state: .failed, message: "tiles"),
        MapLoad(state: .failed), MapLoad(state: .loaded, message: "x"),
    ]

    static let delays: [Duration] = [.zero, .milliseconds(100), .seconds(1), .seconds(5), .seconds(10), .seconds(11), .seconds(60)]
}
