import MeridianCore

/// The rules a session's state must satisfy after every step (DOMAIN.md).
enum SessionInvariants {
    static func check(_ s: Session, now: Duration) throws(Violation) {
        try participants(s)
        try annotations(s)
        try drags(s, now: now)
        try selections(s)
        try callout(s)
        try camera(s)
    }

    static func participants(_ s: Session) throws(Violation) {
        for (pid, p) in s.participants {
            try require(p.id == pid, "participant stored under \(pid) has id \(p.id)")
            let n = Int(pid.dropFirst()) ?? 0
            try require(pid.first == "p" && n >= 1 && n <= s.joinCount, "participant id \(pid) beyond joinCount \(s.joinCount)")
            if case .participant(let other) = p.following {
                try require(other != pid, "\(pid) follows itself")
                try require(s.participants[other].map { !$0.hidden } == true, "\(pid) follows \(other), who is not a listed participant")
            }
            if let l = p.location {
                try validCoordinate(l.coordinate, "location of \(pid)")
                try require(l.accuracy.isFinite && l.accuracy >= 0, "location of \(pid): accuracy \(l.accuracy)")
                if l.authorization == .reduced {
                    try require(l.heading == nil && l.course == nil, "reduced location of \(pid) carries heading or course")
                    try require(l.accuracy >= UserLocation.coarseAccuracy, "reduced location of \(pid) claims accuracy \(l.accuracy)")
                }
            }
        }
    }

    static func annotations(_ s: Session) throws(Violation) {
        for (id, a) in s.annotations {
            try require(a.id == id, "annotation stored under \"\(id)\" has id \"\(a.id)\"")
            try require(!id.isEmpty, "annotation with an empty id")
            switch a.shape {
            case .point(let p): try validCoordinate(p.coordinate, "annotation \"\(id)\"")
            case .polyline(let l):
                try require(l.coordinates.count >= 2, "polyline \"\(id)\" with \(l.coordinates.count) coordinates")
                for c in l.coordinates { try validCoordinate(c, "polyline \"\(id)\"") }
            case .polygon(let g):
                try require(g.coordinates.count >= 3, "polygon \"\(id)\" with \(g.coordinates.count) coordinates")
                for c in g.coordinates + g.holes.flatMap({ $0 }) { try validCoordinate(c, "polygon \"\(id)\"") }
            }
        }
    }

    static func drags(_ s: Session, now: Duration) throws(Violation) {
        for (id, group) in s.drags {
            try require(!group.drags.isEmpty, "empty drag group kept for \"\(id)\"")
            guard let a = s.annotations[id] else { throw Violation("drag of \"\(id)\", which does not exist") }
            guard let point = a.point else { throw Violation("drag of \"\(id)\", a \(a.shape.name)") }
            try require(point.draggable && a.enabled, "drag of \"\(id)\", which is not draggable and enabled")
            try validCoordinate(group.origin, "drag origin of \"\(id)\"")
            if s.settings.dragPolicy != .lastWriterWins {
                try require(group.drags.count == 1, "\(group.drags.count) drag holders of \"\(id)\" under \(s.settings.dragPolicy.rawValue)")
            }
            try require(Set(group.drags.map(\.participant)).count == group.drags.count, "one participant holds two drags of \"\(id)\"")
            for d in group.drags {
                guard let p = s.participants[d.participant] else {
                    throw Violation("drag of \"\(id)\" by \(d.participant), who is not in the session")
                }
                try require(!p.hidden && p.role.canEdit, "drag of \"\(id)\" by \(d.participant), a \(p.hidden ? "hidden " : "")\(p.role.rawValue)")
                try require(d.state == .starting || d.state == .dragging, "drag of \"\(id)\" kept in state \(d.state.rawValue)")
                try require(d.lastActivity <= now, "drag of \"\(id)\" active in the future")
                try validCoordinate(d.coordinate, "drag of \"\(id)\"")
            }
            if s.settings.dragPolicy != .lastWriterWins, let d = group.drags.first {
                // One holder: the annotation is where its drag put it, or at the origin before the first move.
                let expected = d.state == .starting ? group.origin : d.coordinate
                try require(point.coordinate == expected, "\"\(id)\" is at \(point.coordinate), its \(d.state.rawValue) drag at \(expected)")
            }
        }
    }

    static func selections(_ s: Session) throws(Violation) {
        for (pid, p) in s.participants {
            guard let id = p.selection else { continue }
            guard let a = s.annotations[id] else { throw Violation("\(pid) selects \"\(id)\", which does not exist") }
            try require(a.enabled, "\(pid) selects \"\(id)\", which is disabled")
        }
    }

    static func callout(_ s: Session) throws(Violation) {
        try require((s.callout == nil) == (s.calloutShownBy == nil), "callout and calloutShownBy disagree")
        guard let c = s.callout else { return }
        switch c.anchor {
        case .coordinate(let coordinate): try validCoordinate(coordinate, "callout anchor")
        case .annotation(let id):
            guard let a = s.annotations[id] else { throw Violation("callout anchored to \"\(id)\", which does not exist") }
            try require(a.showsCalloutWhenSelected, "callout anchored to \"\(id)\", which cannot show a callout")
        case .participant(let pid):
            guard let p = s.participants[pid] else { throw Violation("callout anchored to \(pid), who is not in the session") }
            try require(!p.hidden && p.location != nil, "callout anchored to \(pid), who shares no location")
        }
    }

    static func camera(_ s: Session) throws(Violation) {
        if let holder = s.cameraLeaseHolder {
            guard let p = s.participants[holder] else { throw Violation("camera lease held by \(holder), who is not in the session") }
            try require(!p.hidden && p.role.canEdit, "camera lease held by a \(p.role.rawValue)")
        }
        if let c = s.sharedCamera { try normalCamera(c, "shared camera") }
        for (pid, p) in s.participants {
            if let c = p.camera { try normalCamera(c, "camera of \(pid)") }
        }
    }

    static func validCoordinate(_ c: Coordinate, _ what: String) throws(Violation) {
        try require((-90...90).contains(c.latitude) && (-180...180).contains(c.longitude), "\(what): coordinate \(c) out of range")
    }

    /// Validated camera: Web Mercator latitude, longitude in [-180, 180), bearing in [0, 360).
    static func normalCamera(_ c: Camera, _ what: String) throws(Violation) {
        let lat = c.center.latitude, lon = c.center.longitude
        try require(abs(lat) <= Geo.maxMercatorLatitude, "\(what): latitude \(lat) beyond Web Mercator")
        try require(lon >= -180 && lon < 180, "\(what): longitude \(lon) not in [-180, 180)")
        try require((0...Geo.maxZoom).contains(c.zoom), "\(what): zoom \(c.zoom)")
        try require((0...Geo.maxPitch).contains(c.pitch), "\(what): pitch \(c.pitch)")
        try require(c.bearing >= 0 && c.bearing < 360, "\(what): bearing \(c.bearing) not in [0, 360)")
    }

    /// Discrete events take the next seqs in order; transient ones carry the seq they follow.
    static func numbering(_ events: [Emitted], from start: UInt64, to end: UInt64, _ what: String) throws(Violation) {
        var seq = start
        for e in events {
            if !e.isTransient { seq += 1 }
            try require(e.seq == seq, "\(what): event \(e.event) has seq \(e.seq), expected \(seq)")
        }
        try require(end == seq, "\(what): seq went \(start) → \(end) for \(events.count) events (expected \(seq))")
    }
}
