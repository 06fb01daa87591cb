import MeridianCore

/// Reading the JSON forms the client keeps (annotations, participants, callouts): public, for
/// apps and the map binding.
extension JSONValue {
    /// The member `key` of an object; nil when it is missing or this is not an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    /// The text of a JSON string; nil for any other value.
    public var stringValue: String? { if case .string(let s) = self { return s }; return nil }
    /// The value of a JSON number; nil for any other value.
    public var numberValue: Double? { if case .number(let n) = self { return n }; return nil }
    /// The value of `true` or `false`; nil for any other value.
    public var boolValue: Bool? { if case .bool(let b) = self { return b }; return nil }
    /// The elements of a JSON array; nil for any other value.
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a }; return nil }
    /// A number that is a whole value from 0 up that fits a `UInt64` exactly (seqs, revisions); else nil.
    public var uint64Value: UInt64? { numberValue.flatMap { $0 >= 0 ? UInt64(exactly: $0) : nil } }
    /// nil for JSON null as well as for a missing value.
    public var nonNull: JSONValue? { self == .null ? nil : self }

    /// An §8.1 coordinate read from the `latitude` and `longitude` members; nil when either is missing.
    public var coordinateValue: Coordinate? {
        guard let lat = self["latitude"]?.numberValue, let lon = self["longitude"]?.numberValue else { return nil }
        return Coordinate(latitude: lat, longitude: lon)
    }

    /// An §8.2 camera read from `center` and `zoom` (`pitch` and `bearing` 0 when absent); nil
    /// without a center or zoom.
    public var cameraValue: Camera? {
        guard let center = self["center"]?.coordinateValue, let zoom = self["zoom"]?.numberValue else { return nil }
        return Camera(center: center, zoom: zoom, pitch: self["pitch"]?.numberValue ?? 0, bearing: self["bearing"]?.numberValue ?? 0)
    }

    static func coordinate(_ c: Coordinate) -> JSONValue {
        .object(["latitude": .number(c.latitude), "longitude": .number(c.longitude)])
    }

    static func camera(_ c: Camera) -> JSONValue {
        .object(["center": .coordinate(c.center), "zoom": .number(c.zoom), "pitch": .number(c.pitch), "bearing": .number(c.bearing)])
    }

    /// An interest object as a join or `interest` request carries it (SPEC §4.7).
    static func interest(_ i: Interest) -> JSONValue {
        var o: [String: JSONValue] = ["mode": .string(i.mode.rawValue)]
        if let filter = i.filter { o["filter"] = .string(filter.source) }
        guard i.mode == .viewport else { return .object(o) }
        o["margin"] = .number(i.margin)
        if let below = i.clusterBelow { o["clusterBelow"] = .number(Double(below)) }
        if let c = i.camera { o["camera"] = .camera(c) }
        if let v = i.viewport { o["viewport"] = .object(["width": .number(v.width), "height": .number(v.height)]) }
        return .object(o)
    }
}
