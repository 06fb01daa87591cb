import MeridianCore

/// JSON forms of the model's values, as Protocol v1 writes them. Defaults are
/// written out; absent optional values are omitted.
enum Wire {
    static func object(_ pairs: [(String, JSONValue?)]) -> JSONValue {
        var o: [String: JSONValue] = [:]
        for (k, v) in pairs { if let v { o[k] = v } }
        return .object(o)
    }

    static func string(_ s: String?) -> JSONValue? { s.map(JSONValue.string) }
    static func number(_ n: Double?) -> JSONValue? { n.map(JSONValue.number) }
    static func color(_ c: Color?) -> JSONValue? { c.map { .string($0.description) } }

    static func coordinate(_ c: Coordinate) -> JSONValue {
        .object(["latitude": .number(c.latitude), "longitude": .number(c.longitude)])
    }

    static func coordinates(_ cs: [Coordinate]) -> JSONValue { .array(cs.map(coordinate)) }

    static func camera(_ c: Camera) -> JSONValue {
        .object(["center": coordinate(c.center), "zoom": .number(c.zoom), "pitch": .number(c.pitch), "bearing": .number(c.bearing)])
    }

    static func viewport(_ v: Viewport) -> JSONValue {
        .object(["width": .number(v.width), "height": .number(v.height)])
    }

    static func offset(_ o: Offset) -> JSONValue { .object(["dx": .number(o.dx), "dy": .number(o.dy)]) }

    static func annotation(_ a: Annotation) -> JSONValue {
        var pairs: [(String, JSONValue?)] = [
            ("id", .string(a.id)), ("type", .string(a.shape.name)), ("title", string(a.title)),
            ("subtitle", string(a.subtitle)), ("zIndex", .number(Double(a.zIndex))), ("enabled", .bool(a.enabled)),
            ("kind", string(a.kind)), ("metadata", .object(a.metadata)),
        ]
        switch a.shape {
        case .point(let p):
            pairs += [
                ("coordinate", coordinate(p.coordinate)), ("image", string(p.image)),
                ("centerOffset", offset(p.centerOffset)), ("calloutOffset", offset(p.calloutOffset)),
                ("draggable", .bool(p.draggable)), ("canShowCallout", .bool(p.canShowCallout)),
                ("scalesWithViewingDistance", .bool(p.scalesWithViewingDistance)),
                ("rotatesToMatchCamera", .bool(p.rotatesToMatchCamera)),
            ]
        case .polyline(let l):
            pairs += [
                ("coordinates", coordinates(l.coordinates)), ("alpha", .number(l.alpha)),
                ("strokeColor", color(l.strokeColor)), ("lineWidth", .number(l.lineWidth)),
            ]
        case .polygon(let g):
            pairs += [
                ("coordinates", coordinates(g.coordinates)), ("holes", .array(g.holes.map(coordinates))),
                ("alpha", .number(g.alpha)), ("strokeColor", color(g.strokeColor)), ("fillColor", color(g.fillColor)),
            ]
        }
        return object(pairs)
    }

    static func location(_ l: UserLocation?) -> JSONValue {
        guard let l else { return .null }
        return object([
            ("coordinate", coordinate(l.coordinate)), ("accuracy", .number(l.accuracy)),
            ("heading", number(l.heading)), ("course", number(l.course)),
            ("tracking", .string(l.tracking.rawValue)), ("authorization", .string(l.authorization.rawValue)),
        ])
    }

    static func mapLoad(_ m: MapLoad) -> JSONValue {
        object([("state", .string(m.state.rawValue)), ("message", string(m.message))])
    }

    static func follow(_ t: FollowTarget?) -> JSONValue {
        switch t {
        case nil: .null
        case .shared: .string("shared")
        case .participant(let pid): .string(pid)
        }
    }

    static func participant(_ p: Participant) -> JSONValue {
        object([
            ("id", .string(p.id)), ("name", .string(p.name)), ("color", color(p.color)), ("role", .string(p.role.rawValue)),
            ("camera", p.camera.map(camera)), ("viewport", p.viewport.map(viewport)),
            ("following", p.following == nil ? nil : follow(p.following)), ("selection", string(p.selection)),
            ("mapLoad", p.mapLoad.map(mapLoad)), ("location", p.location.map { location($0) }),
        ])
    }

    static func anchor(_ a: Callout.Anchor) -> JSONValue {
        switch a {
        case .coordinate(let c): .object(["coordinate": coordinate(c)])
        case .annotation(let id): .object(["annotation": .string(id)])
        case .participant(let pid): .object(["participant": .string(pid)])
        }
    }

    static func callout(_ c: Callout) -> JSONValue {
        let accessory: JSONValue = switch c.accessory {
        case .hidden: .string("hidden")
        case .button(let t): .object(["button": .string(t.rawValue)])
        case .image(let name): .object(["image": .string(name)])
        }
        return object([
            ("title", .string(c.title)), ("detail", string(c.detail)), ("image", string(c.image)), ("accessory", accessory),
            ("backgroundColor", color(c.backgroundColor)), ("titleColor", color(c.titleColor)),
            ("detailColor", color(c.detailColor)), ("anchor", anchor(c.anchor)),
        ])
    }

    static func settings(_ s: SessionSettings) -> JSONValue {
        let c = s.constraints
        let bounds = c.bounds.map { b in
            JSONValue.object(["southWest": coordinate(b.southWest), "northEast": coordinate(b.northEast)])
        }
        let ms = s.leaseTimeout.components.seconds * 1000 + s.leaseTimeout.components.attoseconds / 1_000_000_000_000_000
        return object([
            ("styleURL", .string(s.styleURL)), ("tint", color(s.tint)), ("dragPolicy", .string(s.dragPolicy.rawValue)),
            ("leaseTimeoutMs", .number(Double(ms))),
            ("constraints", object([
                ("bounds", bounds), ("minZoom", number(c.minZoom)), ("maxZoom", number(c.maxZoom)),
                ("maxPitch", number(c.maxPitch)), ("policy", .string(c.policy.rawValue)),
            ])),
        ])
    }
}
