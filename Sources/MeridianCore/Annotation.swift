/// A shared annotation: a point, a polyline or a polygon, with the fields the
/// map SDKs give their annotation views.
public struct Annotation: Hashable, Sendable {
    public var id: String
    public var title: String?
    public var subtitle: String?
    /// Stacking order: higher is drawn above and receives taps first.
    public var zIndex: Int
    /// Disabled annotations cannot be selected or dragged.
    public var enabled: Bool
    /// The reuse identifier: which view or image template a client uses.
    public var kind: String?
    /// Small free-form data, size-limited by the session's limits.
    public var metadata: [String: JSONValue]
    public var shape: Shape
    /// The session `seq` of the discrete event that last changed the annotation: its
    /// `annotation.added`, its latest `annotation.updated`, or the drag `ending` that committed
    /// its coordinate. Set by the session (a client never sets it); 0 before the session holds it.
    /// Conditional writes (`ifRevision`) compare against it.
    public var revision: UInt64

    public init(
        id: String, shape: Shape, title: String? = nil, subtitle: String? = nil, zIndex: Int = 0,
        enabled: Bool = true, kind: String? = nil, metadata: [String: JSONValue] = [:], revision: UInt64 = 0
    ) {
        self.id = id
        self.shape = shape
        self.title = title
        self.subtitle = subtitle
        self.zIndex = zIndex
        self.enabled = enabled
        self.kind = kind
        self.metadata = metadata
        self.revision = revision
    }

    public enum Shape: Hashable, Sendable {
        case point(Point)
        case polyline(Polyline)
        case polygon(Polygon)

        public var name: String {
            switch self {
            case .point: "point"
            case .polyline: "polyline"
            case .polygon: "polygon"
            }
        }
    }

    public var point: Point? {
        if case .point(let p) = shape { return p }
        return nil
    }

    /// Moves a point annotation (nothing for shapes).
    mutating func movePoint(to coordinate: Coordinate) {
        guard case .point(var p) = shape else { return }
        p.coordinate = coordinate
        shape = .point(p)
    }

    /// True when selecting it shows the selecting participant's callout: the
    /// annotation allows callouts and has a non-empty title.
    public var showsCalloutWhenSelected: Bool {
        (point?.canShowCallout ?? false) && !(title ?? "").isEmpty
    }
}

/// A point annotation (MKAnnotationView / MGLAnnotationView fields).
public struct Point: Hashable, Sendable {
    public var coordinate: Coordinate
    /// Name of a shared annotation image; nil means the client's view for `kind`.
    public var image: String?
    public var centerOffset: Offset
    public var calloutOffset: Offset
    public var draggable: Bool
    public var canShowCallout: Bool
    public var scalesWithViewingDistance: Bool
    public var rotatesToMatchCamera: Bool

    public init(
        coordinate: Coordinate, image: String? = nil, centerOffset: Offset = .zero,
        calloutOffset: Offset = .zero, draggable: Bool = false, canShowCallout: Bool = false,
        scalesWithViewingDistance: Bool = false, rotatesToMatchCamera: Bool = false
    ) {
        self.coordinate = coordinate
        self.image = image
        self.centerOffset = centerOffset
        self.calloutOffset = calloutOffset
        self.draggable = draggable
        self.canShowCallout = canShowCallout
        self.scalesWithViewingDistance = scalesWithViewingDistance
        self.rotatesToMatchCamera = rotatesToMatchCamera
    }
}

/// A polyline. A nil `strokeColor` follows the session's tint colour.
public struct Polyline: Hashable, Sendable {
    public var coordinates: [Coordinate]
    public var alpha: Double
    public var strokeColor: Color?
    public var lineWidth: Double

    public static let defaultLineWidth = 3.0

    public init(coordinates: [Coordinate], alpha: Double = 1, strokeColor: Color? = nil, lineWidth: Double = Polyline.defaultLineWidth) {
        self.coordinates = coordinates
        self.alpha = alpha
        self.strokeColor = strokeColor
        self.lineWidth = lineWidth
    }
}

/// A polygon: an outer ring and optional holes. Nil colours follow the tint.
public struct Polygon: Hashable, Sendable {
    public var coordinates: [Coordinate]
    public var holes: [[Coordinate]]
    public var alpha: Double
    public var strokeColor: Color?
    public var fillColor: Color?

    public init(coordinates: [Coordinate], holes: [[Coordinate]] = [], alpha: Double = 1, strokeColor: Color? = nil, fillColor: Color? = nil) {
        self.coordinates = coordinates
        self.holes = holes
        self.alpha = alpha
        self.strokeColor = strokeColor
        self.fillColor = fillColor
    }
}

/// A partial change to an annotation. A field left nil is unchanged; for
/// optional fields `.some(nil)` clears the value.
public struct AnnotationPatch: Hashable, Sendable {
    public var title: String??
    public var subtitle: String??
    public var zIndex: Int?
    public var enabled: Bool?
    public var kind: String??
    public var metadata: [String: JSONValue]?
    // Point
    public var coordinate: Coordinate?
    public var image: String??
    public var centerOffset: Offset?
    public var calloutOffset: Offset?
    public var draggable: Bool?
    public var canShowCallout: Bool?
    public var scalesWithViewingDistance: Bool?
    public var rotatesToMatchCamera: Bool?
    // Shapes
    public var coordinates: [Coordinate]?
    public var holes: [[Coordinate]]?
    public var alpha: Double?
    public var strokeColor: Color??
    public var fillColor: Color??
    public var lineWidth: Double?

    public init() {}
}
