import MeridianCore

/// Readers for the value types every request shares.
extension Fields {
    func coordinate(_ key: String) throws(ProtocolError) -> Coordinate {
        try Self.coordinate(try object(key))
    }

    func optionalCoordinate(_ key: String) throws(ProtocolError) -> Coordinate? {
        guard let f = try optionalObject(key) else { return nil }
        return try Self.coordinate(f)
    }

    static func coordinate(_ f: Fields) throws(ProtocolError) -> Coordinate {
        let c = Coordinate(latitude: try f.double("latitude"), longitude: try f.double("longitude"))
        try f.finish()
        return c
    }

    func coordinates(_ key: String) throws(ProtocolError) -> [Coordinate] {
        try coordinates(try elements(key), path: name(key))
    }

    func coordinates(_ items: JSONDocument.Children, path: String) throws(ProtocolError) -> [Coordinate] {
        var out: [Coordinate] = []
        for (i, item) in items.enumerated() {
            out.append(try Self.coordinate(try Fields(document: document, node: item, path: "\(path)[\(i)]")))
        }
        return out
    }

    func holes(_ key: String) throws(ProtocolError) -> [[Coordinate]]? {
        guard let rings = try optionalElements(key) else { return nil }
        var out: [[Coordinate]] = []
        for (i, ring) in rings.enumerated() {
            guard document.nodes[ring].kind == .array else { throw .invalid("\(name(key))[\(i)]", "must be an array of coordinates") }
            out.append(try coordinates(document.children(of: ring), path: "\(name(key))[\(i)]"))
        }
        return out
    }

    func camera(_ key: String) throws(ProtocolError) -> Camera {
        let f = try object(key)
        let c = Camera(
            center: try f.coordinate("center"), zoom: try f.double("zoom"),
            pitch: try f.optionalDouble("pitch") ?? 0, bearing: try f.optionalDouble("bearing") ?? 0)
        try f.finish()
        return c
    }

    func optionalViewport(_ key: String) throws(ProtocolError) -> Viewport? {
        guard let f = try optionalObject(key) else { return nil }
        let v = Viewport(width: try f.double("width"), height: try f.double("height"))
        try f.finish()
        return v
    }

    func optionalOffset(_ key: String) throws(ProtocolError) -> Offset? {
        guard let f = try optionalObject(key) else { return nil }
        let o = Offset(dx: try f.double("dx"), dy: try f.double("dy"))
        try f.finish()
        return o
    }

    func location(_ key: String) throws(ProtocolError) -> UserLocation? {
        guard let f = try optionalObject(key) else { return nil }
        let l = UserLocation(
            coordinate: try f.coordinate("coordinate"),
            accuracy: try f.double("accuracy"),
            heading: try f.optionalDouble("heading"),
            course: try f.optionalDouble("course"),
            tracking: try f.optionalEnumeration("tracking", TrackingMode.self) ?? .none,
            authorization: try f.optionalEnumeration("authorization", AccuracyAuthorization.self) ?? .full)
        try f.finish()
        return l
    }

    func constraints(_ key: String) throws(ProtocolError) -> CameraConstraints? {
        guard let f = try optionalObject(key) else { return nil }
        var c = CameraConstraints()
        if let b = try f.optionalObject("bounds") {
            c.bounds = Bounds(southWest: try b.coordinate("southWest"), northEast: try b.coordinate("northEast"))
            try b.finish()
        }
        c.minZoom = try f.optionalDouble("minZoom")
        c.maxZoom = try f.optionalDouble("maxZoom")
        c.maxPitch = try f.optionalDouble("maxPitch")
        c.policy = try f.optionalEnumeration("policy", ConstraintPolicy.self) ?? .clamp
        try f.finish()
        return c
    }
}
