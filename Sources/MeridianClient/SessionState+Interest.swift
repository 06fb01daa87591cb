import MeridianCore

/// A mirror with viewport interest (SPEC §4.7) holds the annotations of its area only.
extension SessionState {
    /// An `interest` message: with `complete` the area's annotations replace all others; else
    /// what entered is added or replaced and what left is dropped. Its seq is accounted for.
    mutating func applyArea(_ m: JSONValue) {
        isFiltered = true
        if m["complete"]?.boolValue == true {
            annotations = [:]
            drags = [:]
        }
        for a in m["entered"]?.arrayValue ?? [] {
            if let id = a["id"]?.stringValue { annotations[id] = a }
        }
        for id in m["left"]?.arrayValue ?? [] {
            guard let id = id.stringValue else { continue }
            annotations[id] = nil
            drags[id] = nil
        }
        for d in m["drags"]?.arrayValue ?? [] {
            guard let id = d["id"]?.stringValue, let p = d["participant"]?.stringValue,
                  let state = d["state"]?.stringValue.flatMap(DragState.init(rawValue:)),
                  let c = d["coordinate"]?.coordinateValue else { continue }
            drags[id, default: [:]][p] = DragUpdate(annotation: id, participant: p, state: state, coordinate: c, reason: nil)
        }
        if let s = m["seq"]?.uint64Value { seq = max(seq, s) }
    }

    /// A `skipped` marker: the discrete events up to `through` not received were outside the area.
    mutating func skip(through: UInt64) {
        seq = max(seq, through)
    }
}
