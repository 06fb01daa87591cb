/// Drag state of an annotation for one participant (`MKAnnotationViewDragState`).
public enum DragState: String, Hashable, Sendable, CaseIterable {
    /// `none`: not dragging; `starting`: picked up; `dragging`: moving; `canceling`: dropped, position restored; `ending`: dropped, position committed.
    case none, starting, dragging, canceling, ending

    /// The legal transitions. `ending → none` and `canceling → none` are taken
    /// by the server itself; `starting → none` is never legal.
    public func canMove(to next: DragState) -> Bool {
        switch (self, next) {
        case (.none, .starting), (.starting, .dragging), (.starting, .canceling),
             (.dragging, .dragging), (.dragging, .ending), (.dragging, .canceling),
             (.ending, .none), (.canceling, .none):
            return true
        default:
            return false
        }
    }
}

/// How concurrent drags of one annotation are resolved.
public enum DragPolicy: String, Hashable, Sendable, CaseIterable {
    /// The first `starting` in server order leases the annotation; others are refused.
    case exclusive
    /// As exclusive, but an owner may take over an editor's drag.
    case priority
    /// No lease: moves apply in server order; the last `ending` decides.
    case lastWriterWins = "last-writer-wins"
}

/// One participant's drag in progress (state `starting` or `dragging`).
public struct ActiveDrag: Hashable, Sendable {
    /// The participant dragging.
    public var participant: ParticipantID
    /// Where the drag is: `starting` or `dragging`.
    public var state: DragState
    /// This drag's own latest coordinate (what its `ending` commits).
    public var coordinate: Coordinate
    /// When the lease was last refreshed by a `starting` or a move.
    public var lastActivity: Duration
}

/// A drag that a `canceling` or `ending` event ends: as it was just before the event, and its
/// place among the annotation's drags then.
public struct EndedDrag: Hashable, Sendable {
    /// The drag as it was just before the ending event.
    public var drag: ActiveDrag
    /// Its index among the annotation's drags just before the event.
    public var position: Int

    /// Builds the record of an ended drag and its former index.
    public init(drag: ActiveDrag, position: Int) {
        self.drag = drag
        self.position = position
    }
}

/// The drags in progress on one annotation. Under `exclusive` and `priority`
/// there is at most one; under `last-writer-wins` there may be several.
public struct DragGroup: Hashable, Sendable {
    /// The last committed coordinate: what a final `canceling` restores.
    public var origin: Coordinate
    /// In the order they started.
    public var drags: [ActiveDrag]

    /// The drag `participant` has in progress on this annotation, if any.
    public func drag(of participant: ParticipantID) -> ActiveDrag? {
        drags.first { $0.participant == participant }
    }

    mutating func update(_ participant: ParticipantID, _ change: (inout ActiveDrag) -> Void) {
        guard let i = drags.firstIndex(where: { $0.participant == participant }) else { return }
        change(&drags[i])
    }
}

/// Why the server ended a drag itself.
public enum DragEndReason: String, Hashable, Sendable {
    /// `lease_expired`: the holder sent no `starting` or move for `leaseTimeoutMs`.
    case leaseExpired = "lease_expired"
    /// `holder_left`: the dragging participant left or disconnected.
    case holderLeft = "holder_left"
    /// `preempted`: an owner took the drag over under the `priority` policy.
    case preempted
    /// `annotation_removed`: the annotation was removed.
    case annotationRemoved = "annotation_removed"
    /// `annotation_changed`: the annotation was made non-draggable or disabled.
    case annotationChanged = "annotation_changed"
    /// `policy_changed`: the session's `dragPolicy` changed, which cancels every drag.
    case policyChanged = "policy_changed"
}
