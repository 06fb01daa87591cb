/// Undo and redo of a participant's own changes.
///
/// Every accepted `annotation.add`, `annotation.update`, `annotation.remove` and drag `ending`
/// is remembered in its sender's history. `undo` reverts the newest step, `redo` the newest
/// undone one, each as a new change in the session order (a `change.undone` or
/// `change.redone` event, then the change), under the same role rules as the change itself.
/// A step is reverted only while its annotation is as the step left it: once another
/// participant changed it, the step is refused with `revision_conflict` and forgotten, so the
/// next `undo` reaches the step before it. Histories outlive a participant's connection (see
/// ``JoinRequest/previous``) and are part of the session's durable record.
extension Session {
    mutating func revert(by p: Participant, redo: Bool) throws(SessionError) -> [Emitted] {
        let request = redo ? "redo" : "undo"
        try requireEditor(p, request)
        guard let step = redo ? histories[p.id]?.redo.last : histories[p.id]?.undo.last else {
            throw SessionError(.notFound, "\(request): \(p.id) has no change to \(redo ? "redo" : "undo") in session \(id)")
        }
        let id = step.annotation
        let current = annotations[id]
        guard (current?.revision ?? removals[id]) == step.at else {
            // Changed since by someone else: the step can never be reverted.
            forgetNewest(of: p.id, redo: redo)
            throw SessionError.undoConflict(request, step, current: current)
        }
        if let holder = drags[id]?.drags.first?.participant {
            let name = participants[holder]?.name ?? holder
            throw SessionError(.beingDragged, "\(request): annotation \"\(id)\" is being dragged by \(name) (\(holder)); try again after the drag", holder: holder)
        }
        if current == nil, annotations.count >= limits.maxAnnotations {
            throw SessionError(.limitExceeded, "\(request): session \(self.id) holds the maximum of \(limits.maxAnnotations) annotations")
        }
        // Accepted: the mark, then the change.
        var out = [emit(.undone(UndoMark(participant: p.id, annotation: id, change: step.change, redo: redo)))]
        if var restored = step.before {
            restored.revision = nextRevision
            if current == nil {
                annotations[id] = restored
                removals[id] = nil
                out.append(emit(.annotationAdded(restored)))
            } else {
                out += store(updated: restored)
            }
        } else {
            out += drop(id, reason: "annotation_removed")
        }
        var history = histories[p.id]!
        if redo { history.redo.removeLast() } else { history.undo.removeLast() }
        // The state the step had changed is back, under this seq: the sender's steps that left
        // the annotation in that state now expect it at this seq.
        let restored = annotations[id]
        func follow(_ steps: inout [UndoStep]) {
            for i in steps.indices where steps[i].annotation == id && steps[i].at == step.beforeAt && (steps[i].after == nil) == (restored == nil) {
                steps[i].at = seq
                steps[i].after = restored
            }
        }
        follow(&history.undo)
        follow(&history.redo)
        let reverse = UndoStep(change: step.change, annotation: id, before: step.after, after: restored, at: seq, beforeAt: step.at)
        if redo { history.undo.append(reverse) } else { history.redo.append(reverse) }
        history.lastChange = seq
        histories[p.id] = history
        changedHistories.insert(p.id)
        return out
    }

    /// Remembers a change `pid` just made (the session's seq is the change's); its redo steps go.
    /// `removedBefore`: for an add, the seq the annotation had last been removed at, if it had.
    mutating func remember(_ change: UndoStep.Change, of id: String, before: Annotation?, removedBefore: UInt64? = nil, by pid: ParticipantID) {
        var history = histories[pid] ?? UndoHistory()
        let beforeAt = before?.revision ?? removedBefore ?? 0
        history.undo.append(UndoStep(change: change, annotation: id, before: before, after: committedAnnotation(id), at: seq, beforeAt: beforeAt))
        if history.undo.count > limits.maxUndoSteps { history.undo.removeFirst(history.undo.count - limits.maxUndoSteps) }
        history.redo.removeAll()
        history.lastChange = seq
        histories[pid] = history
        changedHistories.insert(pid)
    }

    /// Whether the session assigned `pid` (`p1`, `p2`, …) since this epoch began.
    func assignedInThisEpoch(_ pid: ParticipantID) -> Bool {
        guard pid.first == "p", let n = Int(pid.dropFirst()) else { return false }
        return n > firstJoinOfEpoch && n <= joinCount
    }

    private mutating func forgetNewest(of pid: ParticipantID, redo: Bool) {
        if redo { histories[pid]?.redo.removeLast() } else { histories[pid]?.undo.removeLast() }
        changedHistories.insert(pid)
    }

    /// A joiner takes over the history of the participant it was on an earlier connection,
    /// when that one is gone and the joiner has none of its own. An id of an earlier epoch
    /// (`epoch`) that this epoch assigned again names someone else: its history stays.
    mutating func inheritHistory(from previous: ParticipantID?, of epoch: String? = nil, to pid: ParticipantID) {
        guard let previous, previous != pid, participants[previous] == nil, histories[pid] == nil else { return }
        if let epoch, epoch != self.epoch, assignedInThisEpoch(previous) { return }
        guard let history = histories.removeValue(forKey: previous) else { return }
        histories[pid] = history
        changedHistories.formUnion([previous, pid])
    }

    /// Keeps at most ``SessionLimits/maxAbsentHistories`` histories of participants not in the
    /// session: those changed longest ago go first.
    mutating func forgetOldHistories() {
        let absent = histories.filter { participants[$0.key] == nil }
        guard absent.count > limits.maxAbsentHistories else { return }
        let oldest = absent.sorted { ($0.value.lastChange, $0.key) < ($1.value.lastChange, $1.key) }
            .prefix(absent.count - limits.maxAbsentHistories)
        for (pid, _) in oldest {
            histories[pid] = nil
            changedHistories.insert(pid)
        }
    }

    /// Notes that `id` was removed by the last event. Only removals a history step may revert
    /// need remembering: past ``SessionLimits/maxAnnotations`` of them, the others are forgotten.
    mutating func noteRemoval(of id: String) {
        removals[id] = seq
        guard removals.count > limits.maxAnnotations else { return }
        removals = Self.removals(in: histories, of: annotations)
    }

    /// The removals the steps of `histories` may revert: of each annotation absent from
    /// `annotations`, the latest seq a step says it was removed at.
    static func removals(in histories: [ParticipantID: UndoHistory], of annotations: [String: Annotation]) -> [String: UInt64] {
        var removals: [String: UInt64] = [:]
        for history in histories.values {
            for step in history.undo + history.redo where step.after == nil && annotations[step.annotation] == nil {
                removals[step.annotation] = max(removals[step.annotation] ?? 0, step.at)
            }
        }
        return removals
    }

    /// The histories changed since the last call (nil: forgotten), for storage to write.
    public mutating func takeChangedHistories() -> [ParticipantID: UndoHistory?] {
        guard !changedHistories.isEmpty else { return [:] }
        defer { changedHistories.removeAll() }
        return Dictionary(uniqueKeysWithValues: changedHistories.map { ($0, histories[$0]) })
    }
}

extension SessionError {
    /// An `undo` or `redo` whose annotation another participant changed (or removed, or added
    /// again) since the step: it carries the annotation as it is now, when there is one.
    static func undoConflict(_ request: String, _ step: UndoStep, current: Annotation?) -> SessionError {
        let now = current.map { "is at revision \($0.revision)" } ?? "was removed"
        let then = step.after.map { "at revision \($0.revision)" } ?? "removed"
        return SessionError(
            .revisionConflict,
            "\(request) of \(step.change.rawValue) on \"\(step.annotation)\" refused: the change left it \(then) but it \(now) "
                + "(changed by another participant since); nothing was changed, and the step is forgotten",
            field: nil, holder: nil, current: current.map { .annotation($0) })
    }
}
