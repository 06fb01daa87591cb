import MeridianCore

/// JSON forms of the model's values, as Protocol v1 writes them: keys of nested objects in
/// alphabetical order, defaults written out, absent optional values omitted.
extension JSONOutput {
    mutating func coordinate(_ c: Coordinate) {
        raw(#"{"latitude":"#)
        number(c.latitude)
        raw(#","longitude":"#)
        number(c.longitude)
        raw("}")
    }

    mutating func coordinates(_ cs: [Coordinate]) {
        raw("[")
        for (i, c) in cs.enumerated() {
            if i > 0 { raw(",") }
            coordinate(c)
        }
        raw("]")
    }

    mutating func camera(_ c: Camera) {
        raw(#"{"bearing":"#)
        number(c.bearing)
        raw(#","center":"#)
        coordinate(c.center)
        raw(#","pitch":"#)
        number(c.pitch)
        raw(#","zoom":"#)
        number(c.zoom)
        raw("}")
    }

    mutating func camera(orNull c: Camera?) {
        if let c { camera(c) } else { raw("null") }
    }

    mutating func viewport(_ v: Viewport) {
        raw(#"{"height":"#)
        number(v.height)
        raw(#","width":"#)
        number(v.width)
        raw("}")
    }

    mutating func offset(_ o: Offset) {
        raw(#"{"dx":"#)
        number(o.dx)
        raw(#","dy":"#)
        number(o.dy)
        raw("}")
    }

    mutating func color(_ c: Color) {
        c.withHex { hex in
            raw("\"")
            raw(hex)
            raw("\"")
        }
    }

    mutating func annotation(_ a: Annotation) {
        switch a.shape {
        case .point(let p):
            raw(#"{"calloutOffset":"#)
            offset(p.calloutOffset)
            raw(#","canShowCallout":"#)
            bool(p.canShowCallout)
            raw(#","centerOffset":"#)
            offset(p.centerOffset)
            raw(#","coordinate":"#)
            coordinate(p.coordinate)
            raw(#","draggable":"#)
            bool(p.draggable)
            commonFields(a, image: p.image)
            raw(#","revision":"#)
            integer(a.revision)
            raw(#","rotatesToMatchCamera":"#)
            bool(p.rotatesToMatchCamera)
            raw(#","scalesWithViewingDistance":"#)
            bool(p.scalesWithViewingDistance)
        case .polyline(let l):
            raw(#"{"alpha":"#)
            number(l.alpha)
            raw(#","coordinates":"#)
            coordinates(l.coordinates)
            commonFields(a, image: nil)
            raw(#","lineWidth":"#)
            number(l.lineWidth)
            raw(#","metadata":"#)
            value(.object(a.metadata))
            raw(#","revision":"#)
            integer(a.revision)
            if let s = l.strokeColor {
                raw(#","strokeColor":"#)
                color(s)
            }
        case .polygon(let g):
            raw(#"{"alpha":"#)
            number(g.alpha)
            raw(#","coordinates":"#)
            coordinates(g.coordinates)
            raw(#","enabled":"#)
            bool(a.enabled)
            if let f = g.fillColor {
                raw(#","fillColor":"#)
                color(f)
            }
            raw(#","holes":["#)
            for (i, hole) in g.holes.enumerated() {
                if i > 0 { raw(",") }
                coordinates(hole)
            }
            raw(#"],"id":"#)
            string(a.id)
            if let k = a.kind {
                raw(#","kind":"#)
                string(k)
            }
            raw(#","metadata":"#)
            value(.object(a.metadata))
            raw(#","revision":"#)
            integer(a.revision)
            if let s = g.strokeColor {
                raw(#","strokeColor":"#)
                color(s)
            }
        }
        titles(a)
        raw(#","type":"#)
        string(a.shape.name)
        raw(#","zIndex":"#)
        integer(a.zIndex)
        raw("}")
    }

    /// `enabled`, `id`, `image` (points), `kind` and, for points, `metadata`: the fields that
    /// sort between a shape's own. Polylines write `metadata` after `lineWidth` themselves.
    private mutating func commonFields(_ a: Annotation, image: String?) {
        raw(#","enabled":"#)
        bool(a.enabled)
        raw(#","id":"#)
        string(a.id)
        if let image {
            raw(#","image":"#)
            string(image)
        }
        if let k = a.kind {
            raw(#","kind":"#)
            string(k)
        }
        if case .point = a.shape {
            raw(#","metadata":"#)
            value(.object(a.metadata))
        }
    }

    private mutating func titles(_ a: Annotation) {
        if let s = a.subtitle {
            raw(#","subtitle":"#)
            string(s)
        }
        if let t = a.title {
            raw(#","title":"#)
            string(t)
        }
    }

    mutating func location(_ l: UserLocation) {
        raw(#"{"accuracy":"#)
        number(l.accuracy)
        raw(#","authorization":"#)
        string(l.authorization.rawValue)
        raw(#","coordinate":"#)
        coordinate(l.coordinate)
        if let c = l.course {
            raw(#","course":"#)
            number(c)
        }
        if let h = l.heading {
            raw(#","heading":"#)
            number(h)
        }
        raw(#","tracking":"#)
        string(l.tracking.rawValue)
        raw("}")
    }

    mutating func location(orNull l: UserLocation?) {
        if let l { location(l) } else { raw("null") }
    }

    mutating func mapLoad(_ m: MapLoad) {
        raw("{")
        if let message = m.message {
            raw(#""message":"#)
            string(message)
            raw(",")
        }
        raw(#""state":"#)
        string(m.state.rawValue)
        raw("}")
    }

    mutating func follow(_ t: FollowTarget?) {
        switch t {
        case nil: raw("null")
        case .shared: raw(#""shared""#)
        case .participant(let pid): string(pid)
        }
    }

    mutating func participant(_ p: Participant) {
        raw("{")
        if let c = p.camera {
            raw(#""camera":"#)
            camera(c)
            raw(",")
        }
        raw(#""color":"#)
        color(p.color)
        raw(",")
        if p.following != nil {
            raw(#""following":"#)
            follow(p.following)
            raw(",")
        }
        raw(#""id":"#)
        string(p.id)
        if let l = p.location {
            raw(#","location":"#)
            location(l)
        }
        if let m = p.mapLoad {
            raw(#","mapLoad":"#)
            mapLoad(m)
        }
        raw(#","name":"#)
        string(p.name)
        raw(#","role":"#)
        string(p.role.rawValue)
        if let s = p.selection {
            raw(#","selection":"#)
            string(s)
        }
        if let v = p.viewport {
            raw(#","viewport":"#)
            viewport(v)
        }
        raw("}")
    }

    mutating func anchor(_ a: Callout.Anchor) {
        switch a {
        case .coordinate(let c):
            raw(#"{"coordinate":"#)
            coordinate(c)
        case .annotation(let id):
            raw(#"{"annotation":"#)
            string(id)
        case .participant(let pid):
            raw(#"{"participant":"#)
            string(pid)
        }
        raw("}")
    }

    mutating func callout(_ c: Callout) {
        raw(#"{"accessory":"#)
        switch c.accessory {
        case .hidden: raw(#""hidden""#)
        case .button(let t):
            raw(#"{"button":"#)
            string(t.rawValue)
            raw("}")
        case .image(let name):
            raw(#"{"image":"#)
            string(name)
            raw("}")
        }
        raw(#","anchor":"#)
        anchor(c.anchor)
        optional(#","backgroundColor":"#, c.backgroundColor)
        if let d = c.detail {
            raw(#","detail":"#)
            string(d)
        }
        optional(#","detailColor":"#, c.detailColor)
        if let i = c.image {
            raw(#","image":"#)
            string(i)
        }
        raw(#","title":"#)
        string(c.title)
        optional(#","titleColor":"#, c.titleColor)
        raw("}")
    }

    private mutating func optional(_ key: StaticString, _ c: Color?) {
        guard let c else { return }
        raw(key)
        color(c)
    }

    mutating func settings(_ s: SessionSettings) {
        let c = s.constraints
        raw(#"{"constraints":{"#)
        if let b = c.bounds {
            raw(#""bounds":{"northEast":"#)
            coordinate(b.northEast)
            raw(#","southWest":"#)
            coordinate(b.southWest)
            raw("},")
        }
        if let v = c.maxPitch {
            raw(#""maxPitch":"#)
            number(v)
            raw(",")
        }
        if let v = c.maxZoom {
            raw(#""maxZoom":"#)
            number(v)
            raw(",")
        }
        if let v = c.minZoom {
            raw(#""minZoom":"#)
            number(v)
            raw(",")
        }
        raw(#""policy":"#)
        string(c.policy.rawValue)
        raw(#"},"dragPolicy":"#)
        string(s.dragPolicy.rawValue)
        let ms = s.leaseTimeout.components.seconds * 1000 + s.leaseTimeout.components.attoseconds / 1_000_000_000_000_000
        raw(#","leaseTimeoutMs":"#)
        integer(Int(ms))
        raw(#","styleURL":"#)
        string(s.styleURL)
        raw(#","tint":"#)
        color(s.tint)
        raw("}")
    }
}
