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

    public var canEdit: Bool { self != .viewer }
}

/// Map load state (WillStartLoadingMap / DidFinishLoadingMap / DidFailLoadingMap).
public enum MapLoadState: String, Hashable, Sendable, CaseIterable {
    case loading, loaded, failed
}

public struct MapLoad: Hashable, Sendable {
    public var state: MapLoadState
    /// The error message when `state` is `failed`.
    public var message: String?
    public init(state: MapLoadState, message: String? = nil) {
        self.state = state
        self.message = message
    }
}

public enum TrackingMode: String, Hashable, Sendable, CaseIterable {
    case none, follow, followWithHeading, followWithCourse
}

public enum AccuracyAuthorization: String, Hashable, Sendable, CaseIterable {
    case full, reduced
}

/// A participant's own location, as its device reports it.
public struct UserLocation: Hashable, Sendable {
    public var coordinate: Coordinate
    /// Horizontal accuracy in metres.
    public var accuracy: Double
    /// Degrees clockwise from true north, if known.
    public var heading: Double?
    /// Direction of travel in degrees, if known.
    public var course: Double?
    public var tracking: TrackingMode
    public var authorization: AccuracyAuthorization

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
    case shared
    case participant(ParticipantID)
}

/// A participant and its presence.
public struct Participant: Hashable, Sendable {
    public var id: ParticipantID
    public var name: String
    public var color: Color
    public var role: Role
    /// Hidden participants (dashboards) watch without being listed.
    public var hidden: Bool
    public var camera: Camera?
    public var viewport: Viewport?
    public var following: FollowTarget?
    public var selection: String?
    public var mapLoad: MapLoad?
    /// Always the shared (possibly coarsened) form.
    public var location: UserLocation?

    public init(id: ParticipantID, name: String, color: Color, role: Role, hidden: Bool = false) {
        self.id = id
        self.name = name
        self.color = color
        self.role = role
        self.hidden = hidden
    }
}
