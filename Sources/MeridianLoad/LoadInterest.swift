/// Which annotation changes the simulated clients ask for (SPEC §4.7).
public enum LoadInterest: String, Sendable, CaseIterable {
    /// Every client receives every change: joins carry no `interest`.
    case everything
    /// A big map: each client joins with viewport interest on its own city (``Cities``), and the
    /// seeded annotations and each dragger's annotation lie in the cities, so a client receives
    /// the changes of its own city only.
    case viewport
}

extension LoadInterest {
    /// The view a viewport client joins with, centred on its city.
    static let zoom = 12
    static let viewportWidth = 1024
    static let viewportHeight = 768
    static let margin = 0.5

    /// The join's `interest` field (with its leading comma) for a client in city `centre`, or nothing.
    func joinField(centre: GeoPoint) -> String {
        guard self == .viewport else { return "" }
        let camera = #"{"center":{"latitude":\#(centre.latitude),"longitude":\#(centre.longitude)},"zoom":\#(Self.zoom)}"#
        return #","interest":{"mode":"viewport","margin":\#(Self.margin),"camera":\#(camera),"viewport":{"width":\#(Self.viewportWidth),"height":\#(Self.viewportHeight)}}"#
    }
}
