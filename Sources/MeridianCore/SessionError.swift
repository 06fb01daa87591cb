/// Why a command was refused. A refusal is an expected outcome, returned as a
/// value; the session is unchanged.
public struct SessionError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The stable error code sent to the client (Protocol/SPEC.md §9).
    public let code: Code
    /// A human-readable explanation of what was refused and why.
    public let message: String
    /// The offending field as a dotted path (e.g. `annotation.coordinate.latitude`).
    public let field: String?
    /// The participant holding what was asked for (drag or camera lease conflicts).
    public let holder: ParticipantID?
    /// With `revision_conflict`: the annotation as it is now (its `revision` included), so the
    /// client can show its own change beside the one it did not see.
    public var annotation: Annotation? { current?.annotation }
    private let current: Current?

    /// Builds a refusal from a code and message, with the offending field and the holder where they apply.
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

    /// The refusal as `code: message`.
    public var description: String { "\(code.rawValue): \(message)" }

    /// Stable error codes, listed with client advice in `Protocol/SPEC.md`.
    public struct Code: RawRepresentable, Hashable, Sendable {
        /// The code as written on the wire, e.g. `invalid_field`.
        public let rawValue: String
        /// Wraps a wire code string.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A field is missing, of the wrong type, out of range or not allowed here; `field` names it.
        public static let invalidField = Code(rawValue: "invalid_field")
        /// The participant's role does not allow the request.
        public static let forbidden = Code(rawValue: "forbidden")
        /// The annotation, participant, callout or undo step asked for does not exist.
        public static let notFound = Code(rawValue: "not_found")
        /// An annotation or participant with that id already exists.
        public static let alreadyExists = Code(rawValue: "already_exists")
        /// A size or count limit of ``SessionLimits`` would be exceeded.
        public static let limitExceeded = Code(rawValue: "limit_exceeded")
        /// The drag state sent is not a legal step from the sender's current drag state.
        public static let illegalDragTransition = Code(rawValue: "illegal_drag_transition")
        /// The annotation is not an enabled, draggable point.
        public static let notDraggable = Code(rawValue: "not_draggable")
        /// Another participant's drag holds the annotation (`holder` names it).
        public static let dragConflict = Code(rawValue: "drag_conflict")
        /// The annotation is being dragged, so its coordinate cannot change now (`holder` names a dragger).
        public static let beingDragged = Code(rawValue: "being_dragged")
        /// The annotation is disabled and cannot be selected.
        public static let notSelectable = Code(rawValue: "not_selectable")
        /// The anchor cannot show a callout: an annotation without `canShowCallout` or a title, or a participant sharing no location.
        public static let calloutNotAllowed = Code(rawValue: "callout_not_allowed")
        /// Another participant holds the camera lease (`holder` names it).
        public static let cameraLeaseHeld = Code(rawValue: "camera_lease_held")
        /// Moving the shared camera or releasing the lease needs the lease, which the sender does not hold.
        public static let cameraLeaseRequired = Code(rawValue: "camera_lease_required")
        /// The camera lies outside the session's constraints, whose policy is `reject`.
        public static let cameraOutOfBounds = Code(rawValue: "camera_out_of_bounds")
        /// The annotation has changed since the revision a conditional write (`ifRevision`) or an undo step expects.
        public static let revisionConflict = Code(rawValue: "revision_conflict")
    }

    static func invalid(_ field: String, _ message: String) -> SessionError {
        SessionError(.invalidField, "\(field): \(message)", field: field)
    }
}
