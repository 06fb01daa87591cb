/// Why a command was refused. A refusal is an expected outcome, returned as a
/// value; the session is unchanged.
public struct SessionError: Error, Hashable, Sendable, CustomStringConvertible {
    public let code: Code
    public let message: String
    /// The offending field as a dotted path (e.g. `annotation.coordinate.latitude`).
    public let field: String?
    /// The participant holding what was asked for (drag or camera lease conflicts).
    public let holder: ParticipantID?

    public init(_ code: Code, _ message: String, field: String? = nil, holder: ParticipantID? = nil) {
        self.code = code
        self.message = message
        self.field = field
        self.holder = holder
    }

    public var description: String { "\(code.rawValue): \(message)" }

    /// Stable error codes, listed with client advice in `Protocol/SPEC.md`.
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let invalidField = Code(rawValue: "invalid_field")
        public static let forbidden = Code(rawValue: "forbidden")
        public static let notFound = Code(rawValue: "not_found")
        public static let alreadyExists = Code(rawValue: "already_exists")
        public static let limitExceeded = Code(rawValue: "limit_exceeded")
        public static let illegalDragTransition = Code(rawValue: "illegal_drag_transition")
        public static let notDraggable = Code(rawValue: "not_draggable")
        public static let dragConflict = Code(rawValue: "drag_conflict")
        public static let beingDragged = Code(rawValue: "being_dragged")
        public static let notSelectable = Code(rawValue: "not_selectable")
        public static let calloutNotAllowed = Code(rawValue: "callout_not_allowed")
        public static let cameraLeaseHeld = Code(rawValue: "camera_lease_held")
        public static let cameraLeaseRequired = Code(rawValue: "camera_lease_required")
        public static let cameraOutOfBounds = Code(rawValue: "camera_out_of_bounds")
    }

    static func invalid(_ field: String, _ message: String) -> SessionError {
        SessionError(.invalidField, "\(field): \(message)", field: field)
    }
}
