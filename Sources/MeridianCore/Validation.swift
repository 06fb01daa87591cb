/// Field validation. Every check names the field it refuses, as a dotted path.
struct Validator {
    let limits: SessionLimits

    func finite(_ v: Double, _ field: String) throws(SessionError) {
        guard v.isFinite else { throw .invalid(field, "must be a finite number") }
    }

    func number(_ v: Double, in range: ClosedRange<Double>, _ field: String) throws(SessionError) {
        try finite(v, field)
        guard range.contains(v) else {
            throw .invalid(field, "must be within \(fmt(range.lowerBound))...\(fmt(range.upperBound)), got \(fmt(v))")
        }
    }

    /// A coordinate of an annotation, callout or location: latitude ±90, longitude ±180.
    func coordinate(_ c: Coordinate, _ field: String) throws(SessionError) {
        try number(c.latitude, in: -90...90, field + ".latitude")
        try number(c.longitude, in: -180...180, field + ".longitude")
    }

    /// Validates a camera and puts it in normal form: latitude limited to what
    /// Web Mercator can show, longitude wrapped to [-180, 180), bearing to [0, 360).
    func camera(_ c: Camera, _ field: String) throws(SessionError) -> Camera {
        try number(c.center.latitude, in: -90...90, field + ".center.latitude")
        try finite(c.center.longitude, field + ".center.longitude")
        try number(c.zoom, in: 0...Geo.maxZoom, field + ".zoom")
        try number(c.pitch, in: 0...Geo.maxPitch, field + ".pitch")
        try finite(c.bearing, field + ".bearing")
        let lat = min(max(c.center.latitude, -Geo.maxMercatorLatitude), Geo.maxMercatorLatitude)
        return Camera(
            center: Coordinate(latitude: lat, longitude: Geo.wrapLongitude(c.center.longitude)),
            zoom: c.zoom, pitch: c.pitch, bearing: Geo.wrapBearing(c.bearing))
    }

    func viewport(_ v: Viewport, _ field: String) throws(SessionError) {
        try number(v.width, in: 1...limits.maxViewportPoints, field + ".width")
        try number(v.height, in: 1...limits.maxViewportPoints, field + ".height")
    }

    func offset(_ o: Offset, _ field: String) throws(SessionError) {
        try number(o.dx, in: -10_000...10_000, field + ".dx")
        try number(o.dy, in: -10_000...10_000, field + ".dy")
    }

    func text(_ s: String?, max: Int, _ field: String) throws(SessionError) {
        guard let s else { return }
        guard s.count <= max else { throw .invalid(field, "must be at most \(max) characters, got \(s.count)") }
    }

    func identifier(_ s: String, _ field: String) throws(SessionError) {
        guard !s.isEmpty else { throw .invalid(field, "must not be empty") }
        try text(s, max: limits.maxIdentifierLength, field)
    }

    func name(_ s: String?, _ field: String) throws(SessionError) {
        guard let s else { return }
        try identifier(s, field)
    }

    func alpha(_ a: Double, _ field: String) throws(SessionError) {
        try number(a, in: 0...1, field)
    }

    func ring(_ coords: [Coordinate], minimum: Int, _ field: String) throws(SessionError) {
        guard coords.count >= minimum else { throw .invalid(field, "needs at least \(minimum) coordinates, got \(coords.count)") }
        guard coords.count <= limits.maxCoordinatesPerShape else {
            throw SessionError(.limitExceeded, "\(field): at most \(limits.maxCoordinatesPerShape) coordinates, got \(coords.count)", field: field)
        }
        for (i, c) in coords.enumerated() { try coordinate(c, "\(field)[\(i)]") }
    }

    func annotation(_ a: Annotation, _ field: String) throws(SessionError) {
        try identifier(a.id, field + ".id")
        try text(a.title, max: limits.maxTitleLength, field + ".title")
        try text(a.subtitle, max: limits.maxTextLength, field + ".subtitle")
        try name(a.kind, field + ".kind")
        guard a.metadata.values.allSatisfy(\.isFinite) else { throw .invalid(field + ".metadata", "numbers must be finite") }
        let size = JSONValue.object(a.metadata).encoded.count
        guard size <= limits.maxMetadataBytes else {
            throw SessionError(.limitExceeded, "\(field).metadata: at most \(limits.maxMetadataBytes) bytes encoded, got \(size)", field: field + ".metadata")
        }
        switch a.shape {
        case .point(let p):
            try coordinate(p.coordinate, field + ".coordinate")
            try name(p.image, field + ".image")
            try offset(p.centerOffset, field + ".centerOffset")
            try offset(p.calloutOffset, field + ".calloutOffset")
        case .polyline(let l):
            try ring(l.coordinates, minimum: 2, field + ".coordinates")
            try alpha(l.alpha, field + ".alpha")
            try number(l.lineWidth, in: 0...100, field + ".lineWidth")
        case .polygon(let g):
            try ring(g.coordinates, minimum: 3, field + ".coordinates")
            guard g.holes.count <= limits.maxHolesPerPolygon else {
                throw SessionError(.limitExceeded, "\(field).holes: at most \(limits.maxHolesPerPolygon) holes", field: field + ".holes")
            }
            var total = g.coordinates.count
            for (i, hole) in g.holes.enumerated() {
                try ring(hole, minimum: 3, "\(field).holes[\(i)]")
                total += hole.count
            }
            guard total <= limits.maxCoordinatesPerShape else {
                throw SessionError(.limitExceeded, "\(field): at most \(limits.maxCoordinatesPerShape) coordinates in all rings, got \(total)", field: field + ".holes")
            }
            try alpha(g.alpha, field + ".alpha")
        }
    }

    func location(_ l: UserLocation, _ field: String) throws(SessionError) {
        try coordinate(l.coordinate, field + ".coordinate")
        try number(l.accuracy, in: 0...1_000_000, field + ".accuracy")
        if let h = l.heading { try number(h, in: 0...360, field + ".heading") }
        if let c = l.course { try number(c, in: 0...360, field + ".course") }
    }

    func bounds(_ b: Bounds, _ field: String) throws(SessionError) {
        try coordinate(b.southWest, field + ".southWest")
        try coordinate(b.northEast, field + ".northEast")
        guard b.southWest.latitude <= b.northEast.latitude else {
            throw .invalid(field, "southWest.latitude must not be above northEast.latitude")
        }
    }

    func constraints(_ c: CameraConstraints, _ field: String) throws(SessionError) {
        if let b = c.bounds { try bounds(b, field + ".bounds") }
        if let z = c.minZoom { try number(z, in: 0...Geo.maxZoom, field + ".minZoom") }
        if let z = c.maxZoom { try number(z, in: 0...Geo.maxZoom, field + ".maxZoom") }
        if let lo = c.minZoom, let hi = c.maxZoom, lo > hi { throw .invalid(field + ".minZoom", "must not exceed maxZoom") }
        if let p = c.maxPitch { try number(p, in: 0...Geo.maxPitch, field + ".maxPitch") }
    }

    private func fmt(_ v: Double) -> String {
        var out: [UInt8] = []
        JSONWriter.writeNumber(v, into: &out)
        return v.isFinite ? String(decoding: out, as: UTF8.self) : "\(v)"
    }
}
