import MeridianCore

extension Fields {
    enum ShapeType: String, CaseIterable { case point, polyline, polygon }

    /// A whole annotation, with every default of Protocol v1 filled in.
    ///
    /// `storedRevision` nil reads a request's annotation, which may not carry `revision` (the
    /// server sets it); otherwise the form storage keeps: its `revision`, or `storedRevision`
    /// for a record written before annotations had revisions.
    func annotation(_ key: String, storedRevision: UInt64? = nil) throws(ProtocolError) -> Annotation {
        let f = try object(key)
        let revision: UInt64
        if let fallback = storedRevision {
            revision = try f.optionalRevision("revision") ?? fallback
        } else {
            try f.refuseRevision()
            revision = 0
        }
        let shape: Annotation.Shape
        switch try f.enumeration("type", ShapeType.self) {
        case .point:
            shape = .point(Point(
                coordinate: try f.coordinate("coordinate"),
                image: try f.optionalString("image"),
                centerOffset: try f.optionalOffset("centerOffset") ?? .zero,
                calloutOffset: try f.optionalOffset("calloutOffset") ?? .zero,
                draggable: try f.optionalBool("draggable") ?? false,
                canShowCallout: try f.optionalBool("canShowCallout") ?? false,
                scalesWithViewingDistance: try f.optionalBool("scalesWithViewingDistance") ?? false,
                rotatesToMatchCamera: try f.optionalBool("rotatesToMatchCamera") ?? false))
        case .polyline:
            shape = .polyline(Polyline(
                coordinates: try f.coordinates("coordinates"),
                alpha: try f.optionalDouble("alpha") ?? 1,
                strokeColor: try f.optionalColor("strokeColor"),
                lineWidth: try f.optionalDouble("lineWidth") ?? Polyline.defaultLineWidth))
        case .polygon:
            shape = .polygon(Polygon(
                coordinates: try f.coordinates("coordinates"),
                holes: try f.holes("holes") ?? [],
                alpha: try f.optionalDouble("alpha") ?? 1,
                strokeColor: try f.optionalColor("strokeColor"),
                fillColor: try f.optionalColor("fillColor")))
        }
        let a = Annotation(
            id: try f.string("id"), shape: shape,
            title: try f.optionalString("title"), subtitle: try f.optionalString("subtitle"),
            zIndex: try f.optionalInt("zIndex") ?? 0, enabled: try f.optionalBool("enabled") ?? true,
            kind: try f.optionalString("kind"), metadata: try f.optionalMetadata("metadata") ?? [:], revision: revision)
        try f.finish()
        return a
    }

    /// A partial change; `null` clears an optional field.
    func patch(_ key: String) throws(ProtocolError) -> AnnotationPatch {
        let f = try object(key)
        var p = AnnotationPatch()
        p.title = try f.clearable("title", f.optionalString)
        p.subtitle = try f.clearable("subtitle", f.optionalString)
        p.kind = try f.clearable("kind", f.optionalString)
        p.image = try f.clearable("image", f.optionalString)
        p.strokeColor = try f.clearable("strokeColor", f.optionalColor)
        p.fillColor = try f.clearable("fillColor", f.optionalColor)
        p.zIndex = try f.optionalInt("zIndex")
        p.enabled = try f.optionalBool("enabled")
        p.metadata = try f.optionalMetadata("metadata")
        p.coordinate = try f.optionalCoordinate("coordinate")
        p.centerOffset = try f.optionalOffset("centerOffset")
        p.calloutOffset = try f.optionalOffset("calloutOffset")
        p.draggable = try f.optionalBool("draggable")
        p.canShowCallout = try f.optionalBool("canShowCallout")
        p.scalesWithViewingDistance = try f.optionalBool("scalesWithViewingDistance")
        p.rotatesToMatchCamera = try f.optionalBool("rotatesToMatchCamera")
        if f.has("coordinates") { p.coordinates = try f.coordinates("coordinates") }
        p.holes = try f.holes("holes")
        p.alpha = try f.optionalDouble("alpha")
        p.lineWidth = try f.optionalDouble("lineWidth")
        for key in ["zIndex", "enabled", "metadata", "coordinate", "centerOffset", "calloutOffset", "draggable",
                    "canShowCallout", "scalesWithViewingDistance", "rotatesToMatchCamera", "coordinates", "holes",
                    "alpha", "lineWidth"] where f.isNull(key) {
            throw .invalid(f.name(key), "cannot be null; leave it out to keep the current value")
        }
        for fixed in ["id", "type"] where f.has(fixed) {
            throw .invalid(f.name(fixed), "cannot be changed")
        }
        try f.refuseRevision("; ifRevision beside changes makes the update conditional")
        try f.finish()
        return p
    }

    func callout(_ key: String) throws(ProtocolError) -> Callout {
        let f = try object(key)
        let anchorFields = try f.object("anchor")
        let anchor: Callout.Anchor
        if let c = try anchorFields.optionalCoordinate("coordinate") {
            anchor = .coordinate(c)
        } else if let id = try anchorFields.optionalString("annotation") {
            anchor = .annotation(id)
        } else if let pid = try anchorFields.optionalString("participant") {
            anchor = .participant(pid)
        } else {
            throw .invalid(anchorFields.path, "needs one of coordinate, annotation, participant")
        }
        try anchorFields.finish()
        let c = Callout(
            title: try f.string("title"), detail: try f.optionalString("detail"), image: try f.optionalString("image"),
            accessory: try f.accessory("accessory"),
            backgroundColor: try f.optionalColor("backgroundColor"),
            titleColor: try f.optionalColor("titleColor"), detailColor: try f.optionalColor("detailColor"),
            anchor: anchor)
        try f.finish()
        return c
    }

    private func accessory(_ key: String) throws(ProtocolError) -> Callout.Accessory {
        guard let index = try lookup(key) else { return .hidden }
        if document.nodes[index].kind == .string, document.string(at: index) == "hidden" { return .hidden }
        let f = try Fields(document: document, node: index, path: name(key))
        let result: Callout.Accessory
        if let button = try f.optionalEnumeration("button", Callout.ButtonType.self) {
            result = .button(button)
        } else if let image = try f.optionalString("image") {
            result = .image(image)
        } else {
            throw .invalid(name(key), "must be \"hidden\", {\"button\": type} or {\"image\": name}")
        }
        try f.finish()
        return result
    }
}
