/// A shared annotation: a point, a polyline or a polygon, with the fields the
/// map SDKs give their annotation views.
public struct Annotation: Hashable, Sendable {
    /// The annotation's id: 1–128 characters, unique in its session.
    public var id: String
    /// The title shown on the annotation and its callout (≤ 256 characters); nil when absent.
    public var title: String?
    /// The secondary text under the title (≤ 1 024 characters); nil when absent.
    public var subtitle: String?
    /// Stacking order: higher is drawn above and receives taps first.
    public var zIndex: Int
    /// Disabled annotations cannot be selected or dragged.
    public var enabled: Bool
    /// The reuse identifier: which view or image template a client uses.
    public var kind: String?
    /// Small free-form data, size-limited by the session's limits.
    public var metadata: [String: JSONValue]
    /// The geometry and its shape-specific fields: a point, a polyline or a polygon.
    public var shape: Shape
    /// The session `seq` of the discrete event that last changed the annotation: its
    /// `annotation.added`, its latest `annotation.updated`, or the drag `ending` that committed
    /// its coordinate. Set by the session (a client never sets it); 0 before the session holds it.
    /// Conditional writes (`ifRevision`) compare against it.
    public var revision: UInt64

    /// Builds an annotation with the wire defaults (z-index 0, enabled, no kind or metadata); the session sets `revision`.
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

    /// The annotation's geometry (its `type` on the wire), with the fields of that shape.
    public enum Shape: Hashable, Sendable {
        /// A single coordinate, drawn as a view or image.
        case point(Point)
        /// An open line through two or more coordinates.
        case polyline(Polyline)
        /// A closed ring, optionally with holes.
        case polygon(Polygon)

        /// The shape's `type` on the wire: `point`, `polyline` or `polygon`.
        public var name: String {
            switch self {
            case .point: "point"
            case .polyline: "polyline"
            case .polygon: "polygon"
            }
        }
    }

    /// The point fields when the annotation is a point; nil for a polyline or polygon.
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
    /// Where the point is, in degrees (latitude −90…90, longitude −180…180, not wrapped).
    public var coordinate: Coordinate
    /// Name of a shared annotation image; nil means the client's view for `kind`.
    public var image: String?
    /// Shift of the view from the coordinate, in points (x right, y down).
    public var centerOffset: Offset
    /// Shift of the callout from its default position, in points; an annotation-anchored shared callout uses it too.
    public var calloutOffset: Offset
    /// Whether participants may drag the point (only while it is also enabled).
    public var draggable: Bool
    /// Whether selecting the point shows a callout (when it also has a non-empty title).
    public var canShowCallout: Bool
    /// Whether the view shrinks as a pitched camera looks further away.
    public var scalesWithViewingDistance: Bool
    /// Whether the view turns with the camera's bearing instead of staying upright.
    public var rotatesToMatchCamera: Bool

    /// Builds a point at `coordinate` with the wire defaults: zero offsets, not draggable, no callout.
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
    /// The vertices in order (2–10 000), not wrapped across the antimeridian.
    public var coordinates: [Coordinate]
    /// Opacity, from 0 (transparent) to 1 (opaque).
    public var alpha: Double
    /// The line colour; nil follows the session's tint.
    public var strokeColor: Color?
    /// The stroke width in points, 0–100.
    public var lineWidth: Double

    /// The line width when none is given: 3 points.
    public static let defaultLineWidth = 3.0

    /// Builds a polyline; opaque, in the tint colour and 3 points wide unless given.
    public init(coordinates: [Coordinate], alpha: Double = 1, strokeColor: Color? = nil, lineWidth: Double = Polyline.defaultLineWidth) {
        self.coordinates = coordinates
        self.alpha = alpha
        self.strokeColor = strokeColor
        self.lineWidth = lineWidth
    }
}

/// A polygon: an outer ring and optional holes. Nil colours follow the tint.
public struct Polygon: Hashable, Sendable {
    /// The outer ring's vertices (3–10 000), not wrapped across the antimeridian.
    public var coordinates: [Coordinate]
    /// Rings cut out of the polygon, each of at least 3 coordinates (at most 100 rings).
    public var holes: [[Coordinate]]
    /// Opacity, from 0 (transparent) to 1 (opaque).
    public var alpha: Double
    /// The outline colour; nil follows the session's tint.
    public var strokeColor: Color?
    /// The fill colour; nil follows the session's tint.
    public var fillColor: Color?

    /// Builds a polygon; no holes, opaque and in the tint colours unless given.
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
    /// A new title; `.some(nil)` clears it.
    public var title: String??
    /// A new subtitle; `.some(nil)` clears it.
    public var subtitle: String??
    /// A new stacking order.
    public var zIndex: Int?
    /// Enables or disables the annotation (disabling cancels its drags and deselects it).
    public var enabled: Bool?
    /// A new reuse identifier; `.some(nil)` clears it.
    public var kind: String??
    /// Metadata that replaces the whole object.
    public var metadata: [String: JSONValue]?
    // Point
    /// Moves a point (refused while any drag of it is in progress).
    public var coordinate: Coordinate?
    /// A new shared image name for a point; `.some(nil)` clears it.
    public var image: String??
    /// A new view offset for a point, in points.
    public var centerOffset: Offset?
    /// A new callout offset for a point, in points.
    public var calloutOffset: Offset?
    /// Makes a point draggable or not (turning it off cancels its drags).
    public var draggable: Bool?
    /// Whether a point shows a callout when selected.
    public var canShowCallout: Bool?
    /// Whether a point's view shrinks with viewing distance.
    public var scalesWithViewingDistance: Bool?
    /// Whether a point's view turns with the camera's bearing.
    public var rotatesToMatchCamera: Bool?
    // Shapes
    /// Replaces a polyline's vertices or a polygon's outer ring.
    public var coordinates: [Coordinate]?
    /// Replaces a polygon's holes.
    public var holes: [[Coordinate]]?
    /// A new opacity (0–1) for a polyline or polygon.
    public var alpha: Double?
    /// A new stroke colour for a polyline or polygon; `.some(nil)` returns it to the tint.
    public var strokeColor: Color??
    /// A new fill colour for a polygon; `.some(nil)` returns it to the tint.
    public var fillColor: Color??
    /// A new line width for a polyline, in points (0–100).
    public var lineWidth: Double?

    /// Builds an empty patch, which changes nothing.
    public init() {}
}
