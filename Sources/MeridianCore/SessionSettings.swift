/// What a camera constraint does with a camera outside it.
public enum ConstraintPolicy: String, Hashable, Sendable, CaseIterable {
    /// Apply the nearest allowed camera and tell the sender.
    case clamp
    /// Refuse the change.
    case reject
}

/// Limits on where cameras may go (`mapView:shouldChangeFromCamera:toCamera:`).
public struct CameraConstraints: Hashable, Sendable {
    public var bounds: Bounds?
    public var minZoom: Double?
    public var maxZoom: Double?
    public var maxPitch: Double?
    public var policy: ConstraintPolicy

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
    public var styleURL: String
    /// Default stroke and fill colour of shapes.
    public var tint: Color
    public var dragPolicy: DragPolicy
    /// A drag lease expires after this long with no move.
    public var leaseTimeout: Duration
    public var constraints: CameraConstraints

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
    public var styleURL: String?
    public var tint: Color?
    public var dragPolicy: DragPolicy?
    public var leaseTimeout: Duration?
    public var constraints: CameraConstraints?
    public init() {}
}

/// Size limits the server enforces on every session.
public struct SessionLimits: Hashable, Sendable {
    public var maxParticipants = 5_000
    public var maxAnnotations = 100_000
    public var maxCoordinatesPerShape = 10_000
    public var maxHolesPerPolygon = 100
    public var maxMetadataBytes = 4_096
    public var maxTitleLength = 256
    public var maxTextLength = 1_024
    public var maxIdentifierLength = 128
    public var maxNameLength = 64
    public var maxViewportPoints = 100_000.0
    /// Above this many participants, joins and leaves are announced together, one `presence`
    /// event per batch (see ``Session/flushPresence()``), instead of one event each.
    public var presenceBatchAbove = 100
    public var minLeaseTimeout: Duration = .milliseconds(100)
    public var maxLeaseTimeout: Duration = .seconds(3_600)
    /// Steps a participant can undo (and as many to redo); older ones are forgotten.
    public var maxUndoSteps = 100
    /// Undo histories kept for participants no longer in the session (to undo after they
    /// reconnect); past it, the one changed longest ago is forgotten.
    public var maxAbsentHistories = 64
    public init() {}
}
