/// What a member wants to receive of its session's annotations.
///
/// `everything` (the default) gets every change. `viewport` gets annotation changes and drag
/// moves only for annotations inside its view, widened by `margin`; presence, cameras,
/// selection and the callout are not filtered. The view is the participant's own camera and
/// viewport; until it has them (and always for a hidden member, which has no camera of its
/// own) it is the interest's `camera` and `viewport`. While the view's zoom is below
/// `clusterBelow`, the member receives clusters of the area instead of its annotations.
/// A `filter`, in either mode, further narrows the annotations to those it matches.
public struct Interest: Hashable, Sendable {
    /// Which annotations a member receives: all of them, or those in its view.
    public enum Mode: String, Hashable, Sendable, CaseIterable {
        /// `everything`: every annotation change; `viewport`: only those about annotations in the member's view and margin.
        case everything, viewport
    }

    /// Whether the member receives every annotation or only those in its view.
    public var mode: Mode
    /// The fraction of the view's width and height added on each side.
    public var margin: Double
    /// The zoom (1–24) below which the member receives clusters instead of annotations; nil: never.
    public var clusterBelow: Int?
    /// The view's camera until the participant sends one of its own (always, for a hidden member).
    public var camera: Camera?
    /// The view's size until the participant sends one of its own (always, for a hidden member).
    public var viewport: Viewport?
    /// Only annotations this filter matches (nil: every annotation).
    public var filter: AnnotationFilter?

    /// The margin when none is given: half the view's width and height on each side.
    public static let defaultMargin = 0.5
    /// The largest margin accepted.
    public static let maxMargin = 4.0
    /// Every annotation change, unfiltered: what a member receives unless it asks otherwise.
    public static let everything = Interest(mode: .everything)

    /// Builds an interest; only `mode` is required (margin 0.5, no clustering, camera, viewport or filter).
    public init(mode: Mode, margin: Double = Interest.defaultMargin, clusterBelow: Int? = nil, camera: Camera? = nil, viewport: Viewport? = nil, filter: AnnotationFilter? = nil) {
        self.mode = mode
        self.filter = filter
        self.margin = margin
        self.clusterBelow = clusterBelow
        self.camera = camera
        self.viewport = viewport
    }

    /// Whether the member receives only some annotation events: viewport mode, or a filter.
    public var isNarrowed: Bool { mode == .viewport || filter != nil }
}

/// Where a member's interest looks now: the area whose annotations it receives (nil: none),
/// the zoom, and whether it receives clusters instead.
///
/// A clustering view counts whole grid cells: its `area` is the outer edge of the cells its
/// view and margin touch, its `zoom` the grid's (at most ``ClusterIndex/defaultMaxZoom``), and
/// `cells` those cells; so the area holds exactly the annotations its clusters count.
public struct InterestView: Hashable, Sendable {
    /// The area whose annotations the member receives; nil: none (no camera or viewport yet).
    public var area: Bounds?
    /// The view's camera zoom rounded down, at most the grid's deepest when clustering; 0 for everything-interest.
    public var zoom: Int
    /// Whether the member receives clusters of the area instead of its annotations.
    public var clusters: Bool
    /// The grid cells a clustering view counts.
    public var cells: ClusterIndex.CellRange?
    /// The interest's filter: of the annotations in `area`, the member receives those it matches.
    public var filter: AnnotationFilter?

    /// A view with no area: the member receives no annotations.
    public static let nothing = InterestView(area: nil, zoom: 0, clusters: false)

    /// Builds a view; a clustering one widens `area` to the outer edges of the grid cells it touches and takes the grid's zoom.
    public init(area: Bounds?, zoom: Int, clusters: Bool) {
        self.area = area
        self.zoom = zoom
        self.clusters = clusters
        if clusters, let area {
            let cells = ClusterIndex.cells(covering: area, zoom: zoom)
            self.cells = cells
            self.area = cells.bounds
            self.zoom = cells.zoom
        }
    }

    /// The view of `interest` for `participant` (its own camera and viewport win over the
    /// interest's, each on its own). Everything-interest looks at the whole world.
    public init(_ interest: Interest, participant: Participant?) {
        guard interest.mode == .viewport else {
            self.init(area: .world, zoom: 0, clusters: false)
            filter = interest.filter
            return
        }
        guard let camera = participant?.camera ?? interest.camera, let viewport = participant?.viewport ?? interest.viewport else {
            self = .nothing
            filter = interest.filter
            return
        }
        // Clusters cover the cells the view plus the margin touches.
        self.init(
            area: ViewArea.bounds(camera: camera, viewport: viewport, margin: interest.margin),
            zoom: Int(camera.zoom.rounded(.down)),
            clusters: interest.clusterBelow.map { camera.zoom < Double($0) } ?? false)
        filter = interest.filter
    }

    /// The area whose annotations are sent one by one (none while clustering).
    public var annotationArea: Bounds? { clusters ? nil : area }
}

extension Session {
    /// `interest` checked field by field (`margin` 0–4, `clusterBelow` 1–24, `camera` and
    /// `viewport` as for camera requests) with its camera in normal form. A filter cannot be
    /// combined with `clusterBelow` (clusters count every annotation). `prefix` names the
    /// object in errors (`interest.` in a join).
    public func validated(_ interest: Interest, prefix: String = "") throws(SessionError) -> Interest {
        var checked = interest
        try validator.number(interest.margin, in: 0...Interest.maxMargin, prefix + "margin")
        if let below = interest.clusterBelow {
            guard below >= 1 && below <= Int(Geo.maxZoom) else {
                throw .invalid(prefix + "clusterBelow", "must be an integer zoom within 1...24, got \(below)")
            }
        }
        if let camera = interest.camera { checked.camera = try validator.camera(camera, prefix + "camera") }
        if let viewport = interest.viewport { try validator.viewport(viewport, prefix + "viewport") }
        if interest.mode == .everything && (interest.camera != nil || interest.viewport != nil || interest.clusterBelow != nil) {
            throw .invalid(prefix + "mode", "camera, viewport and clusterBelow need mode \"viewport\"")
        }
        if interest.filter != nil && interest.clusterBelow != nil {
            throw .invalid(prefix + "filter", "cannot be combined with clusterBelow (clusters count every annotation)")
        }
        return checked
    }
}
