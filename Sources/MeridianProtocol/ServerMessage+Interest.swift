import MeridianCore

/// Messages of viewport interest (SPEC §4.7): area changes, skipped stretches and clusters.
extension ServerMessage {
    /// `interest`: the member's view now, what entered its area (with their drags in progress)
    /// and what left; with `complete`, `entered` is everything in the area.
    public static func interest(
        seq: UInt64, view: InterestView, entered: [Annotation], left: [String], complete: Bool, session: Session
    ) -> [UInt8] {
        let ids = Set(entered.lazy.map(\.id))
        return interest(seq: seq, view: view, entered: entered, left: left, complete: complete) { out in
            out.drags(of: session, where: ids.isEmpty ? { _ in false } : ids.contains)
        }
    }

    /// `interest` announcing one annotation a drag event brings into the area, with `drags`, its
    /// drags in progress as of `seq` (``Session/drags(of:before:)``).
    public static func interest(seq: UInt64, view: InterestView, entering annotation: Annotation, drags: [ActiveDrag]) -> [UInt8] {
        interest(seq: seq, view: view, entered: [annotation], left: [], complete: false) { out in
            out.drags(drags.lazy.map { (annotation.id, $0) })
        }
    }

    private static func interest(
        seq: UInt64, view: InterestView, entered: [Annotation], left: [String], complete: Bool, drags: (inout JSONOutput) -> Void
    ) -> [UInt8] {
        var out = JSONOutput(capacity: 128 + 256 * entered.count)
        out.raw(#"{"type":"interest","seq":"#)
        out.integer(seq)
        out.raw(#","view":"#)
        out.interestView(view)
        out.raw(#","complete":"#)
        out.bool(complete)
        out.raw(#","entered":["#)
        for (i, a) in entered.enumerated() {
            if i > 0 { out.raw(",") }
            out.annotation(a)
        }
        out.raw(#"],"left":["#)
        for (i, id) in left.enumerated() {
            if i > 0 { out.raw(",") }
            out.string(id)
        }
        out.raw(#"],"drags":"#)
        drags(&out)
        out.raw("}")
        return out.bytes
    }

    /// `skipped`: every discrete event up to `seq` that the stream did not carry was outside
    /// the member's interest.
    public static func skipped(seq: UInt64) -> [UInt8] {
        var out = JSONOutput(capacity: 40)
        out.raw(#"{"type":"skipped","seq":"#)
        out.integer(seq)
        out.raw("}")
        return out.bytes
    }

    /// `clusters`: the session's annotations in the member's area, clustered at its zoom.
    public static func clusters(seq: UInt64, view: InterestView, _ clusters: [Cluster]) -> [UInt8] {
        var out = JSONOutput(capacity: 96 + 96 * clusters.count)
        out.raw(#"{"type":"clusters","seq":"#)
        out.integer(seq)
        out.raw(#","view":"#)
        out.interestView(view)
        out.raw(#","clusters":["#)
        for (i, c) in clusters.enumerated() {
            if i > 0 { out.raw(",") }
            out.raw("{")
            if let id = c.annotation {
                out.raw(#""annotation":"#)
                out.string(id)
                out.raw(",")
            }
            out.raw(#""coordinate":"#)
            out.coordinate(c.coordinate)
            out.raw(#","count":"#)
            out.integer(UInt64(c.count))
            out.raw(#","splitZoom":"#)
            if let z = c.splitZoom { out.integer(UInt64(z)) } else { out.raw("null") }
            out.raw("}")
        }
        out.raw("]}")
        return out.bytes
    }

    /// `annotations` (in stacking order) encoded as a snapshot's list.
    public static func annotationsJSON(_ annotations: [Annotation]) -> [UInt8] {
        var out = JSONOutput(capacity: 256 * annotations.count + 2)
        out.raw("[")
        for (i, a) in annotations.enumerated() {
            if i > 0 { out.raw(",") }
            out.annotation(a)
        }
        out.raw("]")
        return out.bytes
    }
}

extension JSONOutput {
    /// `{"area": bounds|null, "clusters": bool, "filter": string (when there is one), "zoom": integer}`.
    mutating func interestView(_ v: InterestView) {
        raw(#"{"area":"#)
        if let area = v.area { bounds(area) } else { raw("null") }
        raw(#","clusters":"#)
        bool(v.clusters)
        if let filter = v.filter {
            raw(#","filter":"#)
            string(filter.source)
        }
        raw(#","zoom":"#)
        integer(UInt64(v.zoom))
        raw("}")
    }

    mutating func bounds(_ b: Bounds) {
        raw(#"{"northEast":"#)
        coordinate(b.northEast)
        raw(#","southWest":"#)
        coordinate(b.southWest)
        raw("}")
    }

    /// A snapshot's `drags` list: drags in progress by annotation id, then start order.
    mutating func drags(of s: Session, where keep: ((String) -> Bool)?) {
        drags(s.drags.keys.sorted().lazy.filter { keep?($0) ?? true }.flatMap { id in s.drags[id]!.drags.lazy.map { (id, $0) } })
    }

    /// A `drags` list of `(annotation id, drag)` pairs, in the order given.
    mutating func drags(_ list: some Sequence<(String, ActiveDrag)>) {
        raw("[")
        var first = true
        for (id, d) in list {
            if !first { raw(",") }
            first = false
            raw(#"{"coordinate":"#)
            coordinate(d.coordinate)
            raw(#","id":"#)
            string(id)
            raw(#","participant":"#)
            string(d.participant)
            raw(#","state":"#)
            string(d.state.rawValue)
            raw("}")
        }
        raw("]")
    }
}
