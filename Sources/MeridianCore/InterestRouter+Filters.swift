/// The filters of a router's members (SPEC §4.7): per distinct filter in use, the ids of the
/// annotations it matches, so that routing an event knows whether its annotation matched a
/// member's filter before the event as well as after.
extension InterestRouter {
    /// One distinct filter in use, and which annotations it matches.
    struct FilterUse: Sendable {
        let filter: AnnotationFilter
        var matching: Set<String>
        /// How many members use it.
        var members: Int
        /// Whether the annotation of the event being routed matched before it, and matches after.
        var matchedBefore = false
        var matchesAfter = false
    }

    /// The annotations in `area` that the filter with `key` matches (all without one).
    func holdings(of area: Bounds, filter key: Int?) -> Set<String> {
        let inArea = Set(annotations.keys(intersecting: area))
        guard let key else { return inArea }
        return inArea.intersection(filters[key]!.matching)
    }

    /// The key of `filter`, counting one more member using it (matching the session's
    /// annotations when it is new).
    mutating func use(_ filter: AnnotationFilter, in session: Session) -> Int {
        if let key = filterKeys[filter] {
            filters[key]!.members += 1
            return key
        }
        let key = nextFilterKey
        nextFilterKey += 1
        filterKeys[filter] = key
        var matching = Set<String>()
        for a in session.annotations.values where filter.matches(a) { matching.insert(a.id) }
        filters[key] = FilterUse(filter: filter, matching: matching, members: 1)
        return key
    }

    /// One member fewer uses the filter with `key`; forgotten with the last.
    mutating func release(_ key: Int) {
        filters[key]!.members -= 1
        guard filters[key]!.members == 0 else { return }
        filterKeys[filters[key]!.filter] = nil
        filters[key] = nil
    }

    /// Notes, for every filter in use, whether the annotation `e` is about matched it before
    /// `e` and matches it after, and keeps the filters' matching sets current. A drag changes
    /// no field a filter reads.
    mutating func rematch(_ id: String, for e: Emitted) -> Bool {
        var changed = false
        var i = filters.values.startIndex
        while i != filters.values.endIndex {
            let before = filters.values[i].matching.contains(id)
            let after: Bool = switch e.event {
            case .annotationAdded(let a), .annotationUpdated(let a): filters.values[i].filter.matches(a)
            case .annotationRemoved: false
            default: before
            }
            if after != before {
                changed = true
                if after { filters.values[i].matching.insert(id) } else { filters.values[i].matching.remove(id) }
            }
            filters.values[i].matchedBefore = before
            filters.values[i].matchesAfter = after
            filters.values.formIndex(after: &i)
        }
        return changed
    }

    /// Whether the routed annotation matched `member`'s filter before the event, and matches after.
    func matching(_ member: Member) -> (before: Bool, after: Bool) {
        guard let key = members[member]!.filter else { return (true, true) }
        return (filters[key]!.matchedBefore, filters[key]!.matchesAfter)
    }
}
