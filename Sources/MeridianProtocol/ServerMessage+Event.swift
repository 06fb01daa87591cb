import MeridianCore

extension ServerMessage {
    /// One broadcast event, encoded once for every recipient.
    public static func event(_ e: Emitted) -> [UInt8] {
        var out = JSONOutput()
        event(e, into: &out)
        return out.bytes
    }

    /// `{"type":…,"seq":…[,"transient":true],…}` with the event's fields in SPEC §7.4's order.
    public static func event(_ e: Emitted, into out: inout JSONOutput) {
        out.raw(#"{"type":"#)
        out.raw(typeName(e.event))
        out.raw(#","seq":"#)
        out.integer(e.seq)
        if e.isTransient { out.raw(#","transient":true"#) }
        switch e.event {
        case .participantJoined(let p):
            out.raw(#","participant":"#)
            out.participant(p)
        case .participantLeft(let pid, let reason):
            out.raw(#","participant":"#)
            out.string(pid)
            out.raw(#","reason":"#)
            out.string(reason)
        case .presence(let joined, let left):
            out.raw(#","joined":["#)
            for (i, p) in joined.enumerated() {
                if i > 0 { out.raw(",") }
                out.participant(p)
            }
            out.raw(#"],"left":["#)
            for (i, l) in left.enumerated() {
                if i > 0 { out.raw(",") }
                out.raw(#"{"participant":"#)
                out.string(l.participant)
                out.raw(#","reason":"#)
                out.string(l.reason)
                out.raw("}")
            }
            out.raw("]")
        case .camera(let target, let pid, let phase, let viewport):
            out.raw(target == .own ? #","target":"own","participant":"# : #","target":"shared","participant":"#)
            out.string(pid)
            switch phase {
            case .begin(let animated):
                out.raw(#","animated":"#)
                out.bool(animated)
            case .changing(let c):
                out.raw(#","camera":"#)
                out.camera(c)
            case .end(let c, let animated):
                out.raw(#","camera":"#)
                out.camera(c)
                out.raw(#","animated":"#)
                out.bool(animated)
            }
            if let viewport {
                out.raw(#","viewport":"#)
                out.viewport(viewport)
            }
        case .cameraLease(let holder, let reason):
            out.raw(#","holder":"#)
            out.string(orNull: holder)
            out.raw(#","reason":"#)
            out.string(reason)
        case .follow(let pid, let target):
            out.raw(#","participant":"#)
            out.string(pid)
            out.raw(#","target":"#)
            out.follow(target)
        case .annotationAdded(let a), .annotationUpdated(let a):
            out.raw(#","annotation":"#)
            out.annotation(a)
        case .annotationRemoved(let id):
            out.raw(#","id":"#)
            out.string(id)
        case .selection(let pid, let id, let showsCallout):
            out.raw(#","participant":"#)
            out.string(pid)
            out.raw(#","annotation":"#)
            out.string(orNull: id)
            out.raw(#","showsCallout":"#)
            out.bool(showsCallout)
        case .calloutShown(let c, let by):
            out.raw(#","callout":"#)
            out.callout(c)
            out.raw(#","by":"#)
            out.string(by)
        case .calloutHidden(let reason):
            out.raw(#","reason":"#)
            out.string(reason)
        case .calloutTapped(let part, let by, let anchor):
            out.raw(#","part":"#)
            out.string(part.rawValue)
            out.raw(#","by":"#)
            out.string(by)
            out.raw(#","anchor":"#)
            out.anchor(anchor)
        case .drag(let id, let pid, let state, let coordinate, let reason):
            out.raw(#","id":"#)
            out.string(id)
            out.raw(#","participant":"#)
            out.string(pid)
            out.raw(#","state":"#)
            out.string(state.rawValue)
            out.raw(#","coordinate":"#)
            out.coordinate(coordinate)
            if state == .ending {
                // The ending commits the coordinate: the session gave the annotation this
                // event's seq as its revision (Session+Drag.swift, endDrag).
                out.raw(#","revision":"#)
                out.integer(e.seq)
            }
            if let reason {
                out.raw(#","reason":"#)
                out.string(reason.rawValue)
            }
        case .mapLoad(let pid, let m):
            out.raw(#","participant":"#)
            out.string(pid)
            out.raw(#","state":"#)
            out.string(m.state.rawValue)
            if let message = m.message {
                out.raw(#","message":"#)
                out.string(message)
            }
        case .location(let pid, let l):
            out.raw(#","participant":"#)
            out.string(pid)
            out.raw(#","location":"#)
            out.location(orNull: l)
        case .settings(let s):
            out.raw(#","settings":"#)
            out.settings(s)
        case .undone(let mark):
            out.raw(#","participant":"#)
            out.string(mark.participant)
            out.raw(#","annotation":"#)
            out.string(mark.annotation)
            out.raw(#","change":"#)
            out.string(mark.change.rawValue)
        }
        out.raw("}")
    }

    /// The event's `type`, quoted.
    private static func typeName(_ event: Event) -> StaticString {
        switch event {
        case .participantJoined: #""participant.joined""#
        case .participantLeft: #""participant.left""#
        case .presence: #""presence""#
        case .camera(_, _, .begin, _): #""camera.begin""#
        case .camera(_, _, .changing, _): #""camera.changing""#
        case .camera(_, _, .end, _): #""camera.end""#
        case .cameraLease: #""camera.lease""#
        case .follow: #""follow""#
        case .annotationAdded: #""annotation.added""#
        case .annotationUpdated: #""annotation.updated""#
        case .annotationRemoved: #""annotation.removed""#
        case .selection: #""selection""#
        case .calloutShown: #""callout.shown""#
        case .calloutHidden: #""callout.hidden""#
        case .calloutTapped: #""callout.tapped""#
        case .drag: #""drag""#
        case .mapLoad: #""map.load""#
        case .location: #""location""#
        case .settings: #""settings""#
        case .undone(let mark): mark.redo ? #""change.redone""# : #""change.undone""#
        }
    }
}
