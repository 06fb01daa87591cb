import MeridianCore

/// The JSON form storage keeps a participant's undo history in:
/// `{"undo":[step…],"redo":[step…],"lastChange":n}`, each step
/// `{"change":"annotation.update","annotation":"id","at":n,"beforeAt":n,"before":annotation?,"after":annotation?}`
/// with annotations in their stored form (an absent `before` or `after`: the annotation did not exist).
extension StoredForm {
    /// A participant's undo history in the stored form above.
    public static func encode(_ h: UndoHistory) -> [UInt8] {
        var out = JSONOutput()
        out.raw(#"{"undo":"#)
        steps(h.undo, into: &out)
        out.raw(#","redo":"#)
        steps(h.redo, into: &out)
        out.raw(#","lastChange":"#)
        out.integer(h.lastChange)
        out.raw("}")
        return out.bytes
    }

    private static func steps(_ steps: [UndoStep], into out: inout JSONOutput) {
        out.raw("[")
        for (i, step) in steps.enumerated() {
            if i > 0 { out.raw(",") }
            out.raw(#"{"change":"#)
            out.string(step.change.rawValue)
            out.raw(#","annotation":"#)
            out.string(step.annotation)
            out.raw(#","at":"#)
            out.integer(step.at)
            out.raw(#","beforeAt":"#)
            out.integer(step.beforeAt)
            if let before = step.before {
                out.raw(#","before":"#)
                out.annotation(before)
            }
            if let after = step.after {
                out.raw(#","after":"#)
                out.annotation(after)
            }
            out.raw("}")
        }
        out.raw("]")
    }

    /// A stored undo history; throws a ``ProtocolError`` if the bytes are not valid JSON or a step is invalid (a missing `lastChange`, `at` or `beforeAt` reads as 0).
    public static func history(_ bytes: [UInt8]) throws(ProtocolError) -> UndoHistory {
        guard case .success(let document) = JSONDocument.parseCopy(bytes) else {
            throw ProtocolError(.invalidMessage, "stored history is not valid JSON")
        }
        let f = try Fields(document: document, node: 0, path: "history")
        return UndoHistory(
            undo: try steps(f, "undo"), redo: try steps(f, "redo"),
            lastChange: UInt64(max(0, try f.optionalInt("lastChange") ?? 0)))
    }

    private static func steps(_ f: Fields, _ key: String) throws(ProtocolError) -> [UndoStep] {
        var steps: [UndoStep] = []
        for (i, node) in try f.elements(key).enumerated() {
            let s = try Fields(document: f.document, node: node, path: "\(f.name(key))[\(i)]")
            let at = UInt64(max(0, try s.optionalInt("at") ?? 0))
            steps.append(UndoStep(
                change: try s.enumeration("change", UndoStep.Change.self), annotation: try s.string("annotation"),
                before: s.has("before") ? try s.annotation("before", storedRevision: at) : nil,
                after: s.has("after") ? try s.annotation("after", storedRevision: at) : nil,
                at: at, beforeAt: UInt64(max(0, try s.optionalInt("beforeAt") ?? 0))))
        }
        return steps
    }
}
