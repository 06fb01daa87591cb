/// What a camera constraint does with a camera outside it.
public enum ConstraintPolicy: String, Hashable, Sendable, CaseIterable {
    /// Apply the nearest allowed camera and tell the sender.
    case clamp
    /// Refuse the change.
    case reject
}

/// Limits on where cameras may go (`mapView:shouldChangeFromCamera:toCamera:`).
public struct CameraConstraints: Hashable, Sendable {
    /// The area the camera centre must stay in (it may cross the antimeridian); nil: anywhere.
    public var bounds: Bounds?
    /// The lowest zoom level allowed (0–24), or nil for no minimum.
    public var minZoom: Double?
    /// The highest zoom level allowed (0–24), or nil for no maximum.
    public var maxZoom: Double?
    /// The steepest pitch allowed, in degrees from vertical (0–85), or nil for no limit.
    public var maxPitch: Double?
    /// Whether a camera outside the constraints is clamped into them or refused.
    public var policy: ConstraintPolicy

    /// Builds constraints; by default none apply and the policy is `clamp`.
    public init(bounds: Bounds? = nil, minZoom: Double? = nil, maxZoom: Double? = nil, maxPitch: Double? = nil, policy: ConstraintPolicy = .clamp) {
        self.bounds = bounds
        self.minZoom = minZoom
        self.maxZoom = maxZoom
        self.maxPitch = maxPitch
        self.policy = policy
    }

    /// The nearest allowed camera.
    public func clamp(_ camera: Camera) -> Camera {
        var c = camera
        if let bounds { c.center = bounds.clamp(c.center) }
        if let minZoom { c.zoom = max(c.zoom, minZoom) }
        if let maxZoom { c.zoom = min(c.zoom, maxZoom) }
        if let maxPitch { c.pitch = min(c.pitch, maxPitch) }
        return c
    }
}

/// Settings of one session, changed by owners.
public struct SessionSettings: Hashable, Sendable {
    /// The URL of the map style participants load (at most 2 048 characters); empty by default.
    public var styleURL: String
    /// Default stroke and fill colour of shapes.
    public var tint: Color
    /// How concurrent drags of one annotation are resolved: `exclusive` (the default), `priority` or `last-writer-wins`.
    public var dragPolicy: DragPolicy
    /// A drag lease expires after this long with no move.
    public var leaseTimeout: Duration
    /// Limits on where cameras may go; none by default.
    public var constraints: CameraConstraints

    /// Builds settings; by default no style, the default tint, exclusive drags, a 10 s lease timeout and no camera constraints.
    public init(
        styleURL: String = "", tint: Color = .defaultTint, dragPolicy: DragPolicy = .exclusive,
        leaseTimeout: Duration = .seconds(10), constraints: CameraConstraints = CameraConstraints()
    ) {
        self.styleURL = styleURL
        self.tint = tint
        self.dragPolicy = dragPolicy
        self.leaseTimeout = leaseTimeout
        self.constraints = constraints
    }
}

/// A partial change to settings; nil fields are unchanged.
public struct SettingsPatch: Hashable, Sendable {
    /// A new map style URL, or nil to keep the current one.
    public var styleURL: String?
    /// A new default shape colour, or nil to keep the current one.
    public var tint: Color?
    /// A new drag policy (changing it cancels every drag in progress), or nil to keep the current one.
    public var dragPolicy: DragPolicy?
    /// A new drag lease timeout, within the session's limits, or nil to keep the current one.
    public var leaseTimeout: Duration?
    /// Camera constraints replacing the current ones as a whole, or nil to keep them.
    public var constraints: CameraConstraints?
    /// Builds an empty patch, which changes nothing.
    public init() {}
}

/// Size limits the server enforces on every session.
public struct SessionLimits: Hashable, Sendable {
    /// Most participants in the session at once, hidden ones included.
    public var maxParticipants = 5_000
    /// Most annotations the session holds.
    public var maxAnnotations = 100_000
    /// Most coordinates in one polyline or polygon, all rings together.
    public var maxCoordinatesPerShape = 10_000
    /// Most holes in one polygon.
    public var maxHolesPerPolygon = 100
    /// Most bytes of an annotation's `metadata`, encoded compactly with keys sorted.
    public var maxMetadataBytes = 4_096
    /// Longest annotation or callout title, in characters.
    public var maxTitleLength = 256
    /// Longest annotation subtitle, callout detail or map load error message, in characters.
    public var maxTextLength = 1_024
    /// Longest identifier (annotation id, kind, image names, participant ids and names), in characters.
    public var maxIdentifierLength = 128
    /// Longest participant display name, in characters.
    public var maxNameLength = 64
    /// Largest viewport width or height, in points.
    public var maxViewportPoints = 100_000.0
    /// Above this many participants, joins and leaves are announced together, one `presence`
    /// event per batch (see ``Session/flushPresence()``), instead of one event each.
    public var presenceBatchAbove = 100
    /// Shortest drag lease timeout the settings may set.
    public var minLeaseTimeout: Duration = .milliseconds(100)
    /// Longest drag lease timeout the settings may set.
    public var maxLeaseTimeout: Duration = .seconds(3_600)
    /// Steps a participant can undo (and as many to redo); older ones are forgotten.
    public var maxUndoSteps = 100
    /// Undo histories kept for participants no longer in the session (to undo after they
    /// reconnect); past it, the one changed longest ago is forgotten.
    public var maxAbsentHistories = 64
    /// Builds the default limits (those of Protocol/SPEC.md §8.12).
    public init() {}
}
