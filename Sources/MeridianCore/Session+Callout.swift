extension Session {
    mutating func showCallout(_ c: Callout, by p: Participant) throws(SessionError) -> [Emitted] {
        try requireEditor(p, "show the shared callout")
        try validator.text(c.title, max: limits.maxTitleLength, "callout.title")
        try validator.text(c.detail, max: limits.maxTextLength, "callout.detail")
        try validator.name(c.image, "callout.image")
        if case .image(let name) = c.accessory { try validator.identifier(name, "callout.accessory.image") }
        switch c.anchor {
        case .coordinate(let coord):
            try validator.coordinate(coord, "callout.anchor.coordinate")
        case .annotation(let id):
            guard let a = annotations[id] else {
                throw SessionError(.notFound, "no annotation \"\(id)\"", field: "callout.anchor.annotation")
            }
            guard a.showsCalloutWhenSelected else {
                throw SessionError(.calloutNotAllowed, "annotation \"\(id)\" cannot show a callout: it needs canShowCallout and a non-empty title", field: "callout.anchor.annotation")
            }
        case .participant(let pid):
            guard let other = participants[pid], !other.hidden else {
                throw SessionError(.notFound, "no participant \(pid)", field: "callout.anchor.participant")
            }
            guard other.location != nil else {
                throw SessionError(.calloutNotAllowed, "participant \(pid) shares no location", field: "callout.anchor.participant")
            }
        }
        callout = c
        calloutShownBy = p.id
        return [emit(.calloutShown(c, by: p.id))]
    }

    mutating func hideCallout(by p: Participant) throws(SessionError) -> [Emitted] {
        try requireEditor(p, "hide the shared callout")
        return dismissCallout(reason: "hidden")
    }

    mutating func tapCallout(_ part: Callout.Part, by p: Participant) throws(SessionError) -> [Emitted] {
        guard let c = callout else { throw SessionError(.notFound, "no callout is shown") }
        if part == .accessory, c.accessory == .hidden {
            throw .invalid("part", "the callout has no accessory button")
        }
        return [emit(.calloutTapped(part, by: p.id, anchor: c.anchor))]
    }

    mutating func dismissCallout(reason: String) -> [Emitted] {
        guard callout != nil else { return [] }
        callout = nil
        calloutShownBy = nil
        return [emit(.calloutHidden(reason: reason))]
    }

    /// Where the callout points now: an annotation anchor follows the
    /// annotation's live coordinate, also while it is dragged. Clients shift
    /// it on screen by the annotation's `calloutOffset`.
    public var calloutCoordinate: Coordinate? {
        switch callout?.anchor {
        case .coordinate(let c): c
        case .annotation(let id): annotations[id]?.point?.coordinate
        case .participant(let pid): participants[pid]?.location?.coordinate
        case nil: nil
        }
    }
}
