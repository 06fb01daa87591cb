/// A participant's id within a session, assigned by the session on join.
public typealias ParticipantID = String

/// What a participant may do.
public enum Role: String, Hashable, Sendable, CaseIterable {
    /// May also change session settings.
    case owner
    /// May change annotations, drags, the shared callout and (holding the lease) the shared camera.
    case editor
    /// Has presence only; changes nothing shared.
    case viewer

    /// Whether the role may change shared state: true for owners and editors, false for viewers.
    public var canEdit: Bool { self != .viewer }
}

/// Map load state (WillStartLoadingMap / DidFinishLoadingMap / DidFailLoadingMap).
public enum MapLoadState: String, Hashable, Sendable, CaseIterable {
    /// `loading`: the map started loading; `loaded`: it finished; `failed`: it could not load (see ``MapLoad/message``).
    case loading, loaded, failed
}

/// A participant's map load state as it last reported it (`map.load`), with the error message of a failure.
public struct MapLoad: Hashable, Sendable {
    /// Whether the participant's map is loading, loaded or failed to load.
    public var state: MapLoadState
    /// The error message when `state` is `failed`.
    public var message: String?
    /// Builds a map load report; the session requires a non-empty `message` with `.failed` and refuses one otherwise.
    public init(state: MapLoadState, message: String? = nil) {
        self.state = state
        self.message = message
    }
}

/// How a participant's map follows its own location, as MapKit's user tracking mode.
public enum TrackingMode: String, Hashable, Sendable, CaseIterable {
    /// `none`: not tracking; `follow`: the map follows the location; `followWithHeading`: and turns with the device heading; `followWithCourse`: and turns with the direction of travel.
    case none, follow, followWithHeading, followWithCourse
}

/// How precisely a participant lets its location be shared, as Core Location's accuracy authorization.
public enum AccuracyAuthorization: String, Hashable, Sendable, CaseIterable {
    /// `full`: the precise location is shared; `reduced`: only a coarse form (see ``UserLocation/shared``).
    case full, reduced
}

/// A participant's own location, as its device reports it.
public struct UserLocation: Hashable, Sendable {
    /// Where the device is, latitude and longitude in degrees.
    public var coordinate: Coordinate
    /// Horizontal accuracy in metres.
    public var accuracy: Double
    /// Degrees clockwise from true north, if known.
    public var heading: Double?
    /// Direction of travel in degrees, if known.
    public var course: Double?
    /// How the participant's map follows this location; `none` by default.
    public var tracking: TrackingMode
    /// Whether others may see the precise location (`full`) or only a coarse one (`reduced`).
    public var authorization: AccuracyAuthorization

    /// Builds a location report; heading and course default to unknown, tracking to `none`, authorization to `full`.
    public init(
        coordinate: Coordinate, accuracy: Double, heading: Double? = nil, course: Double? = nil,
        tracking: TrackingMode = .none, authorization: AccuracyAuthorization = .full
    ) {
        self.coordinate = coordinate
        self.accuracy = accuracy
        self.heading = heading
        self.course = course
        self.tracking = tracking
        self.authorization = authorization
    }

    /// Grid step, in degrees, that reduced-accuracy locations are snapped to
    /// (about 5.5 km of latitude).
    public static let coarseGrid = 0.05
    /// The accuracy reported for a reduced-accuracy location, in metres.
    public static let coarseAccuracy = 5_000.0

    /// What others may see: for `reduced`, the coordinate snapped to a fixed
    /// grid, accuracy no better than 5 km, and no heading or course.
    public var shared: UserLocation {
        guard authorization == .reduced else { return self }
        func snap(_ v: Double) -> Double { (v / Self.coarseGrid).rounded() * Self.coarseGrid }
        var coarse = self
        coarse.coordinate = Coordinate(
            latitude: min(max(snap(coordinate.latitude), -90), 90),
            longitude: Geo.wrapLongitude(snap(coordinate.longitude)))
        coarse.accuracy = max(accuracy, Self.coarseAccuracy)
        coarse.heading = nil
        coarse.course = nil
        return coarse
    }
}

/// Whose camera a participant follows.
public enum FollowTarget: Hashable, Sendable {
    /// The session's shared camera.
    case shared
    /// The own camera of the participant with this id.
    case participant(ParticipantID)
}

/// A participant and its presence.
public struct Participant: Hashable, Sendable {
    /// Unique within the session: the id the join named, or `p1`, `p2`, … assigned in join order.
    public var id: ParticipantID
    /// Display name shown to others (1 to ``SessionLimits/maxNameLength`` characters).
    public var name: String
    /// The colour others draw this participant in: the one its join asked for, else one from the session's palette.
    public var color: Color
    /// What the participant may do in the session.
    public var role: Role
    /// Hidden participants (dashboards) watch without being listed.
    public var hidden: Bool
    /// The participant's own camera as the server last applied it; nil until it sends one.
    public var camera: Camera?
    /// The size in points of the participant's map view, as last sent with a camera request; nil until sent.
    public var viewport: Viewport?
    /// Whose camera the participant follows: the shared one or another participant's; nil when it follows none.
    public var following: FollowTarget?
    /// The id of the annotation the participant has selected, or nil.
    public var selection: String?
    /// The participant's last reported map load state; nil until it reports one.
    public var mapLoad: MapLoad?
    /// Always the shared (possibly coarsened) form.
    public var location: UserLocation?

    /// Builds a participant as it joins, with no presence yet: camera, viewport, following, selection, map load and location unset.
    public init(id: ParticipantID, name: String, color: Color, role: Role, hidden: Bool = false) {
        self.id = id
        self.name = name
        self.color = color
        self.role = role
        self.hidden = hidden
    }
}
