import MeridianClient
import MeridianCore

/// What an app's map view draws, from the session's mirror and this participant's gestures in
/// progress: no UI framework, so one model serves MapKit, Mapbox/MapLibre and ArcGIS views.
public struct MapViewModel: Hashable, Sendable {
    /// An annotation to draw.
    public struct AnnotationItem: Hashable, Sendable {
        /// The annotation's id.
        public var id: String
        /// The annotation as the session has it (an §8.6 object).
        public var annotation: JSONValue
        /// Where to draw it: this participant's drag position while it drags it, else the
        /// session's live coordinate (a remote drag in progress included). Nil for shapes.
        public var coordinate: Coordinate?
        /// Who drags it now (participant ids, this participant included).
        public var draggedBy: [String]
        /// This participant drags it.
        public var isDraggedHere: Bool
    }

    /// Another participant: where it looks, where it is, what it selected.
    public struct Peer: Hashable, Sendable {
        /// The participant's id.
        public var id: String
        /// Its display name (its id when it has none).
        public var name: String
        /// Its colour (`#rrggbb`), if it has one.
        public var color: String?
        /// Its own camera, when it has shared one.
        public var camera: Camera?
        /// Its viewport (§8.3: `{width, height}` in points), when it has shared one.
        public var viewport: JSONValue?
        /// Its shared location (an §8.8 object); nil when it shares none.
        public var location: JSONValue?
        /// The id of the annotation it selected; nil for none.
        public var selection: String?
    }

    /// The annotations to draw, by id.
    public var annotations: [String: AnnotationItem]
    /// The other listed participants, in join order.
    public var peers: [Peer]
    /// The shared callout (an §8.9 object) and who showed it.
    public var callout: JSONValue?
    /// The id of the participant that showed the shared callout.
    public var calloutBy: String?
    /// What this participant follows (`"shared"`, a participant id), nil for nothing.
    public var following: String?
    /// Edits the session refused because someone changed the annotation first: the app shows
    /// each beside theirs and resolves it (``MeridianMapBinding/resolve(_:keeping:)``).
    public var conflicts: [EditConflict]
    /// The last drag the session refused (the view has snapped back).
    public var refusedDrag: DragRefusal?

    /// Nothing to draw: the model before the first join.
    public static let empty = MapViewModel(annotations: [:], peers: [], conflicts: [])

    /// A model from its parts.
    public init(annotations: [String: AnnotationItem], peers: [Peer], callout: JSONValue? = nil, calloutBy: String? = nil,
                following: String? = nil, conflicts: [EditConflict], refusedDrag: DragRefusal? = nil) {
        self.annotations = annotations
        self.peers = peers
        self.callout = callout
        self.calloutBy = calloutBy
        self.following = following
        self.conflicts = conflicts
        self.refusedDrag = refusedDrag
    }

    /// The model of `state` seen by participant `me`, with its own drags at `localDrags`.
    public init(state: SessionState?, me: String?, localDrags: [String: Coordinate], conflicts: [EditConflict] = [], refusedDrag: DragRefusal? = nil) {
        guard let state else {
            self = .empty
            self.conflicts = conflicts
            self.refusedDrag = refusedDrag
            return
        }
        var items: [String: AnnotationItem] = [:]
        for (id, a) in state.annotations {
            var draggers = Set(state.drags[id]?.keys.map { $0 } ?? [])
            let local = localDrags[id]
            if local != nil, let me { draggers.insert(me) }
            items[id] = AnnotationItem(
                id: id, annotation: a, coordinate: local ?? a["coordinate"]?.coordinateValue,
                draggedBy: draggers.sorted(), isDraggedHere: local != nil)
        }
        let peers = state.participantOrder.compactMap { id -> Peer? in
            guard id != me, let p = state.participants[id] else { return nil }
            return Peer(id: id, name: p["name"]?.stringValue ?? id, color: p["color"]?.stringValue, camera: p["camera"]?.cameraValue,
                        viewport: p["viewport"]?.nonNull, location: p["location"]?.nonNull, selection: p["selection"]?.stringValue)
        }
        let following = me.flatMap { state.participants[$0]?["following"]?.stringValue }
        self.init(annotations: items, peers: peers, callout: state.callout, calloutBy: state.calloutBy, following: following,
                  conflicts: conflicts, refusedDrag: refusedDrag)
    }
}

/// An edit refused because someone changed its annotation since the app saw it.
public struct EditConflict: Hashable, Sendable {
    /// The edit the session refused.
    public var edit: OfflineEdit
    /// The annotation as it is now, and its revision.
    public var theirs: RevisionConflict
}

/// A drag the session refused or ended (another participant holds the annotation, the policy
/// took it away): the annotation is drawn where the session has it again.
public struct DragRefusal: Hashable, Sendable {
    /// The id of the annotation whose drag was refused or ended.
    public var annotation: String
    /// The server's error code (`drag_conflict`, `not_draggable`, …) or the drag's end reason.
    public var reason: String
    /// Who holds the annotation, when the server said.
    public var holder: String?

    /// A refused drag of `annotation`, for `reason`, held by `holder` when known.
    public init(annotation: String, reason: String, holder: String?) {
        self.annotation = annotation
        self.reason = reason
        self.holder = holder
    }
}
