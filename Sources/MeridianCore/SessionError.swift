/// Why a command was refused. A refusal is an expected outcome, returned as a
/// value; the session is unchanged.
public struct SessionError: Error, Hashable, Sendable, CustomStringConvertible {
    public let code: Code
    public let message: String
    /// The offending field as a dotted path (e.g. `annotation.coordinate.latitude`).
    public let field: String?
    /// The participant holding what was asked for (drag or camera lease conflicts).
    public let holder: ParticipantID?
    /// With `revision_conflict`: the annotation as it is now (its `revision` included), so the
    /// client can show its own change beside the one it did not see.
    public var annotation: Annotation? { current?.annotation }
    private let current: Current?

    public init(_ code: Code, _ message: String, field: String? = nil, holder: ParticipantID? = nil) {
        self.init(code, message, field: field, holder: holder, current: nil)
    }

    init(_ code: Code, _ message: String, field: String?, holder: ParticipantID?, current: Current?) {
        self.code = code
        self.message = message
        self.field = field
        self.holder = holder
        self.current = current
    }

    /// Boxed: a refusal is returned by value on every path, and most carry no annotation.
    indirect enum Current: Hashable, Sendable {
        case annotation(Annotation)
        var annotation: Annotation { switch self { case .annotation(let a): a } }
    }

    /// A conditional write (`ifRevision`) made against a revision the annotation no longer has.
    static func revisionConflict(_ request: String, _ a: Annotation, expected: UInt64) -> SessionError {
        SessionError(
            .revisionConflict,
            "\(request) of \"\(a.id)\" refused: ifRevision is \(expected) but the annotation is at revision \(a.revision) "
                + "(changed by a request the sender had not seen); nothing was changed, and the error carries the annotation as it is now",
            field: "ifRevision", holder: nil, current: .annotation(a))
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
        public static let revisionConflict = Code(rawValue: "revision_conflict")
    }

    static func invalid(_ field: String, _ message: String) -> SessionError {
        SessionError(.invalidField, "\(field): \(message)", field: field)
    }
}
