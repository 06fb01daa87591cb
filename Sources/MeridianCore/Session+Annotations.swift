extension Session {
    mutating func addAnnotation(_ a: Annotation, by p: Participant) throws(SessionError) -> [Emitted] {
        try requireEditor(p, "add annotations")
        try validator.annotation(a, "annotation")
        guard annotations[a.id] == nil else {
            throw SessionError(.alreadyExists, "annotation \"\(a.id)\" already exists", field: "annotation.id")
        }
        guard annotations.count < limits.maxAnnotations else {
            throw SessionError(.limitExceeded, "session \(id) holds the maximum of \(limits.maxAnnotations) annotations")
        }
        // Whatever revision the command carried, the session's own numbering decides.
        var added = a
        added.revision = nextRevision
        annotations[a.id] = added
        let removedBefore = removals.removeValue(forKey: a.id)
        let out = [emit(.annotationAdded(added))]
        remember(.add, of: a.id, before: nil, removedBefore: removedBefore, by: p.id)
        return out
    }

    mutating func updateAnnotation(
        _ id: String, _ patch: AnnotationPatch, ifRevision: UInt64?, by p: Participant, at now: Duration
    ) throws(SessionError) -> [Emitted] {
        try requireEditor(p, "change annotations")
        let old = try existingAnnotation(id)
        try requireRevision(ifRevision, of: old, for: "annotation.update")
        // Fields are named where the request holds them: under `changes`.
        var updated = try old.applying(patch)
        try validator.annotation(updated, "changes")
        if patch.coordinate != nil, let holder = drags[id]?.drags.first?.participant {
            let name = participants[holder]?.name ?? holder
            throw SessionError(.beingDragged, "annotation \"\(id)\" is being dragged by \(name) (\(holder))", field: "changes.coordinate", holder: holder)
        }
        // Validated: from here on the command is accepted.
        var out: [Emitted] = []
        if drags[id] != nil, !(updated.enabled && (updated.point?.draggable ?? false)) {
            out += cancelAllDrags(of: id, reason: .annotationChanged)
            if case .point(var point) = updated.shape, let restored = annotations[id]?.point?.coordinate {
                point.coordinate = restored
                updated.shape = .point(point)
            }
        }
        let before = committedAnnotation(id)
        updated.revision = nextRevision
        out += store(updated: updated)
        remember(.update, of: id, before: before, by: p.id)
        return out
    }

    /// Replaces an annotation with `updated` (its revision set), and what follows from it: a
    /// disabled annotation is deselected, a callout it no longer shows is dismissed.
    mutating func store(updated: Annotation) -> [Emitted] {
        let id = updated.id
        annotations[id] = updated
        var out = [emit(.annotationUpdated(updated))]
        if !updated.enabled { out += deselectEverywhere(id) }
        if case .annotation(id) = callout?.anchor, !updated.showsCalloutWhenSelected {
            out += dismissCallout(reason: "annotation_changed")
        }
        return out
    }

    mutating func removeAnnotation(_ id: String, ifRevision: UInt64?, by p: Participant, at now: Duration) throws(SessionError) -> [Emitted] {
        try requireEditor(p, "remove annotations")
        try requireRevision(ifRevision, of: try existingAnnotation(id), for: "annotation.remove")
        let before = committedAnnotation(id)
        let out = drop(id, reason: "annotation_removed")
        remember(.remove, of: id, before: before, by: p.id)
        return out
    }

    /// Removes an annotation: its drags are canceled, it is deselected everywhere and a callout
    /// anchored to it dismissed, then `annotation.removed`.
    mutating func drop(_ id: String, reason: String) -> [Emitted] {
        var out = cancelAllDrags(of: id, reason: .annotationRemoved)
        out += deselectEverywhere(id)
        if case .annotation(id) = callout?.anchor { out += dismissCallout(reason: reason) }
        annotations[id] = nil
        out.append(emit(.annotationRemoved(id)))
        noteRemoval(of: id)
        return out
    }
}

extension Annotation {
    /// The annotation with `patch` applied. Fields that do not belong to the
    /// annotation's shape are refused by name (`changes.FIELD`, as in the request).
    func applying(_ patch: AnnotationPatch) throws(SessionError) -> Annotation {
        var a = self
        if let v = patch.title { a.title = v }
        if let v = patch.subtitle { a.subtitle = v }
        if let v = patch.zIndex { a.zIndex = v }
        if let v = patch.enabled { a.enabled = v }
        if let v = patch.kind { a.kind = v }
        if let v = patch.metadata { a.metadata = v }
        func foreign(_ field: String, _ set: Bool) throws(SessionError) {
            if set { throw .invalid("changes.\(field)", "not a field of a \(shape.name) annotation") }
        }
        switch shape {
        case .point(var pt):
            try foreign("coordinates", patch.coordinates != nil)
            try foreign("holes", patch.holes != nil)
            try foreign("alpha", patch.alpha != nil)
            try foreign("strokeColor", patch.strokeColor != nil)
            try foreign("fillColor", patch.fillColor != nil)
            try foreign("lineWidth", patch.lineWidth != nil)
            if let v = patch.coordinate { pt.coordinate = v }
            if let v = patch.image { pt.image = v }
            if let v = patch.centerOffset { pt.centerOffset = v }
            if let v = patch.calloutOffset { pt.calloutOffset = v }
            if let v = patch.draggable { pt.draggable = v }
            if let v = patch.canShowCallout { pt.canShowCallout = v }
            if let v = patch.scalesWithViewingDistance { pt.scalesWithViewingDistance = v }
            if let v = patch.rotatesToMatchCamera { pt.rotatesToMatchCamera = v }
            a.shape = .point(pt)
        case .polyline(var line):
            try foreignPointFields(patch)
            try foreign("holes", patch.holes != nil)
            try foreign("fillColor", patch.fillColor != nil)
            if let v = patch.coordinates { line.coordinates = v }
            if let v = patch.alpha { line.alpha = v }
            if let v = patch.strokeColor { line.strokeColor = v }
            if let v = patch.lineWidth { line.lineWidth = v }
            a.shape = .polyline(line)
        case .polygon(var poly):
            try foreignPointFields(patch)
            try foreign("lineWidth", patch.lineWidth != nil)
            if let v = patch.coordinates { poly.coordinates = v }
            if let v = patch.holes { poly.holes = v }
            if let v = patch.alpha { poly.alpha = v }
            if let v = patch.strokeColor { poly.strokeColor = v }
            if let v = patch.fillColor { poly.fillColor = v }
            a.shape = .polygon(poly)
        }
        return a
    }

    private func foreignPointFields(_ patch: AnnotationPatch) throws(SessionError) {
        let set: [(String, Bool)] = [
            ("coordinate", patch.coordinate != nil), ("image", patch.image != nil),
            ("centerOffset", patch.centerOffset != nil), ("calloutOffset", patch.calloutOffset != nil),
            ("draggable", patch.draggable != nil), ("canShowCallout", patch.canShowCallout != nil),
            ("scalesWithViewingDistance", patch.scalesWithViewingDistance != nil),
            ("rotatesToMatchCamera", patch.rotatesToMatchCamera != nil),
        ]
        if let (field, _) = set.first(where: \.1) {
            throw .invalid("changes.\(field)", "not a field of a \(shape.name) annotation")
        }
    }
}
