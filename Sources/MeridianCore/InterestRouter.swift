/// Routes a session's events to the members with viewport interest or a filter: which
/// annotation changes each receives, what enters and leaves a member's area (the annotations
/// in its view that its filter matches; a filter alone looks at the whole world) when its view
/// or filter changes, and where a member's stream skips events outside its area. Members with
/// everything-interest and no filter are not in the router: they receive every event.
///
/// A pure value fed the session's events in order, after the session applied them.
public struct InterestRouter<Member: Hashable & Sendable>: Sendable {
    struct State: Sendable {
        var view: InterestView
        /// The last discrete seq the member's stream accounts for.
        var lastSeq: UInt64
        /// The key of the member's filter in `filters`; nil without one.
        var filter: Int?
    }

    var members: [Member: State] = [:]
    /// Members' annotation areas (not those clustering or without a view).
    private var areas = SpatialIndex<Member>(cellDegrees: 2)
    /// Every annotation's extent, at its live coordinate.
    public private(set) var annotations = SpatialIndex<String>()
    /// Clusters of every annotation, while some member receives clusters.
    public private(set) var clusters: ClusterIndex?
    /// Whether an annotation changed since ``takeClusterChange()`` was last called.
    private var clustersChanged = false
    /// Every distinct filter members use, by key (empty while no member has one: routing then
    /// does no filter work at all). See InterestRouter+Filters.swift.
    var filters: [Int: FilterUse] = [:]
    var filterKeys: [AnnotationFilter: Int] = [:]
    var nextFilterKey = 0

    /// A router for `session`; `index`, when given, is ``annotationIndex(of:)`` kept current
    /// with ``track(_:in:)`` since (a large session's index is built before anyone needs it).
    public init(session: Session, index: SpatialIndex<String>? = nil) {
        annotations = index ?? Self.annotationIndex(of: session)
    }

    /// Every annotation's extent, at its live coordinate.
    public static func annotationIndex(of session: Session) -> SpatialIndex<String> {
        var index = SpatialIndex<String>()
        for a in session.annotations.values { index.insert(a.id, bounds: a.bounds) }
        return index
    }

    /// Keeps `index` current with `e`: the annotation `e` is about, with its extent before and
    /// after (nil when it did not exist, or no longer does); nil for an event about no annotation.
    @discardableResult
    public static func track(_ e: Emitted, in index: inout SpatialIndex<String>) -> (id: String, before: Bounds?, after: Bounds?)? {
        let id: String
        let after: Bounds?
        switch e.event {
        case .annotationAdded(let a), .annotationUpdated(let a): (id, after) = (a.id, a.bounds)
        case .annotationRemoved(let removed): (id, after) = (removed, nil)
        case .drag(let annotation, _, _, let coordinate, _): (id, after) = (annotation, Bounds(point: coordinate))
        default: return nil
        }
        let before = index.bounds(of: id)
        if let after { index.insert(id, bounds: after) } else { index.remove(id) }
        return (id, before, after)
    }

    /// Whether the router has no members (then everyone receives every event).
    public var isEmpty: Bool { members.isEmpty }
    /// Whether `member` is in the router.
    public func contains(_ member: Member) -> Bool { members[member] != nil }
    /// The current view of `member`; nil when it is not in the router.
    public func view(of member: Member) -> InterestView? { members[member]?.view }
    /// The members whose view receives clusters.
    public var clusterMembers: [Member] { members.compactMap { $0.value.view.clusters ? $0.key : nil } }

    /// What a member's area gained and lost.
    public struct AreaChange: Hashable, Sendable {
        /// Annotations now in the area that were not, in stacking order, at their live coordinates.
        public var entered: [Annotation]
        /// Ids of annotations no longer in the area, sorted.
        public var left: [String]
    }

    /// Sets the view of `member` (adding it, its stream starting at `seq`). With `complete`,
    /// `entered` lists every annotation in the new area (the member holds none it can trust),
    /// `left` is empty, and the stream accounts for `seq`.
    /// The view's filter narrows the area to the annotations it matches.
    public mutating func setView(_ view: InterestView, of member: Member, seq: UInt64, complete: Bool = false, in session: Session) -> AreaChange {
        let old = members[member]
        let before = complete ? nil : old?.view.annotationArea
        let inOld = before.map { holdings(of: $0, filter: old?.filter) } ?? []
        var key: Int?
        if let filter = view.filter { key = use(filter, in: session) }
        if let previous = old?.filter { release(previous) }
        // A new member's stream starts at `seq` (its welcome, or a complete `interest` message);
        // a member's own moves account for nothing until a message says so (accountThrough).
        members[member] = State(view: view, lastSeq: old.map { complete ? max(seq, $0.lastSeq) : $0.lastSeq } ?? seq, filter: key)
        if let area = view.annotationArea { areas.insert(member, bounds: area) } else { areas.remove(member) }
        if view.clusters && clusters == nil { clusters = Self.clusterIndex(of: session) }
        let inNew = view.annotationArea.map { holdings(of: $0, filter: key) } ?? []
        let entered = inNew.subtracting(inOld).compactMap { session.annotations[$0] }
            .sorted { ($0.zIndex, $0.id) < ($1.zIndex, $1.id) }
        return AreaChange(entered: entered, left: inOld.subtracting(inNew).sorted())
    }

    /// Takes `member` out of the router, releasing its filter (and the cluster index with the last clustering member).
    public mutating func remove(_ member: Member) {
        if let key = members[member]?.filter { release(key) }
        members[member] = nil
        areas.remove(member)
        if clusters != nil && !members.values.contains(where: { $0.view.clusters }) { clusters = nil }
    }

    /// Whether clusters may have changed since the last call.
    public mutating func takeClusterChange() -> Bool {
        defer { clustersChanged = false }
        return clustersChanged
    }

    /// Who of the router's members receives an event, and what they need first.
    public struct Route: Sendable {
        /// Not about one annotation: every member receives it.
        public var everyone: Bool
        /// About one annotation: the members whose area holds it before or after the event.
        public var recipients: [Member] = []
        /// Members to tell, before the event, that their stream skipped every discrete event up
        /// to this seq that it did not carry (they were outside the member's area).
        public var skipped: [(member: Member, seq: UInt64)] = []
        /// Members the event brings an annotation to (a drag into the area, or an update that
        /// makes a dragged annotation match a filter): they need the whole annotation before the
        /// event, with its drags in progress just before it.
        public var entering: [(member: Member, annotation: Annotation)] = []
        /// The drags in progress of the entering annotation just before the event (a drag the
        /// event or a later one of its command ends included, one a later one starts not).
        public var enteringDrags: [ActiveDrag] = []
        /// Members the event takes the annotation away from (it moved out of their area): after
        /// the event they are told it left.
        public var leaving: [Member] = []
        /// The annotation the event is about.
        public var annotation: String?
    }

    /// Routes `e`, which `session` has applied, and keeps the indexes current. `departed`: the
    /// annotation the same command removed from `session` (its drags' cancels come first).
    /// `following`: the events the same command emitted after `e` (the session has applied them too).
    public mutating func route(
        _ e: Emitted, in session: Session, departed: Annotation? = nil, following: ArraySlice<Emitted> = []
    ) -> Route {
        guard let (id, before, after) = Self.track(e, in: &annotations) else {
            var route = Route(everyone: true)
            if !e.isTransient {
                // Every member receives it: walk the values in place.
                var i = members.values.startIndex
                while i != members.values.endIndex {
                    let last = members.values[i].lastSeq
                    if last + 1 < e.seq { route.skipped.append((members.keys[i], e.seq - 1)) }
                    members.values[i].lastSeq = max(last, e.seq)
                    members.values.formIndex(after: &i)
                }
            }
            return route
        }
        if clusters != nil {
            if let after { clusters!.insert(id, at: Self.anchor(after)) } else { clusters!.remove(id) }
            clustersChanged = true
        }
        var route = Route(everyone: false, annotation: id)
        let rematched = !filters.isEmpty && rematch(id, for: e)
        // Per drag move: no allocation but the recipients. A member whose area holds both boxes
        // is found twice; the second box only adds the members the first did not find.
        if let before { areas.forEach(intersecting: before) { route.recipients.append($0) } }
        if let after, after != before {
            areas.forEach(intersecting: after) { member in
                if !(before.map { members[member]!.view.annotationArea!.intersects($0) } ?? false) { route.recipients.append(member) }
            }
        }
        if !filters.isEmpty {
            // A filtered member receives the event when the annotation was in its area and
            // matched before it, or is and matches after it.
            route.recipients.removeAll { member in
                guard members[member]!.filter != nil else { return false }
                let area = members[member]!.view.annotationArea!
                let (matchedBefore, matchesAfter) = matching(member)
                let wasIn = matchedBefore && (before.map(area.intersects) ?? false)
                let isIn = matchesAfter && (after.map(area.intersects) ?? false)
                return !wasIn && !isIn
            }
        }
        if let after, before != after || rematched {
            // A drag brings the annotation in; so does an update that makes a dragged annotation
            // match a filter (the member needs its drags before their next step).
            let announces = switch e.event {
            case .drag: true
            case .annotationUpdated: session.drags[id] != nil
            default: false
            }
            for member in route.recipients {
                let area = members[member]!.view.annotationArea!
                let (matchedBefore, matchesAfter) = filters.isEmpty ? (true, true) : matching(member)
                let wasIn = matchedBefore && (before.map(area.intersects) ?? false)
                let isIn = matchesAfter && area.intersects(after)
                if announces && isIn && !wasIn, let annotation = Self.annotation(id, at: e, in: session, departed: departed) {
                    if route.entering.isEmpty { route.enteringDrags = session.drags(of: id, before: [e] + following) }
                    route.entering.append((member, annotation))
                } else if wasIn && !isIn {
                    route.leaving.append(member)
                }
            }
        }
        if !e.isTransient {
            account(e.seq, for: route.recipients, into: &route)
        } else {
            // The interest messages that announce an entering or leaving annotation show the area
            // as of the transient event's seq, so they account for it (§4.7).
            for (member, _) in route.entering { accountThrough(e.seq, for: member) }
            for member in route.leaving { accountThrough(e.seq, for: member) }
        }
        return route
    }

    /// The whole annotation an event is about, as the event leaves it (a drag's at its coordinate):
    /// from the session, or, when the command that emitted it removed it, as it was before.
    private static func annotation(_ id: String, at e: Emitted, in session: Session, departed: Annotation?) -> Annotation? {
        if case .annotationUpdated(let a) = e.event { return a }
        guard var a = session.annotations[id] ?? departed.flatMap({ $0.id == id ? $0 : nil }) else { return nil }
        if case .drag(_, _, _, let coordinate, _) = e.event { a.movePoint(to: coordinate) }
        return a
    }

    /// Notes that `members` receive discrete event `seq`, and which of them skipped events before it.
    private mutating func account(_ seq: UInt64, for receivers: [Member], into route: inout Route) {
        for member in receivers {
            guard let last = members[member]?.lastSeq else { continue }
            if last + 1 < seq { route.skipped.append((member, seq - 1)) }
            members[member]!.lastSeq = max(last, seq)
        }
    }

    /// Notes that `member`'s stream accounts for every event up to `seq` (a message told it so).
    public mutating func accountThrough(_ seq: UInt64, for member: Member) {
        guard let last = members[member]?.lastSeq else { return }
        members[member]!.lastSeq = max(last, seq)
    }

    private static func clusterIndex(of session: Session) -> ClusterIndex {
        var index = ClusterIndex()
        for a in session.annotations.values { index.insert(a.id, at: a.anchor) }
        return index
    }

    private static func anchor(_ b: Bounds) -> Coordinate {
        Coordinate(latitude: (b.southWest.latitude + b.northEast.latitude) / 2, longitude: (b.southWest.longitude + b.northEast.longitude) / 2)
    }
}
