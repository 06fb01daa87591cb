extension Session {
    mutating func select(_ id: String, by p: Participant) throws(SessionError) -> [Emitted] {
        let a = try existingAnnotation(id)
        guard a.enabled else { throw SessionError(.notSelectable, "annotation \"\(id)\" is disabled and cannot be selected", field: "id") }
        // Selecting another annotation deselects the first: one selection each.
        participants[p.id]?.selection = id
        return [emit(.selection(p.id, annotation: id, showsCallout: a.showsCalloutWhenSelected))]
    }

    mutating func deselect(by p: Participant) -> [Emitted] {
        guard p.selection != nil else { return [] }
        participants[p.id]?.selection = nil
        return [emit(.selection(p.id, annotation: nil, showsCallout: false))]
    }

    /// Clears every participant's selection of `id`.
    mutating func deselectEverywhere(_ id: String) -> [Emitted] {
        var out: [Emitted] = []
        for pid in participants.keys.sorted(by: joinedBefore)
        where participants[pid]?.selection == id {
            participants[pid]?.selection = nil
            out.append(emit(.selection(pid, annotation: nil, showsCallout: false)))
        }
        return out
    }
}
