extension Session {
    mutating func drag(
        _ id: String, to next: DragState, coordinate: Coordinate?, ifRevision: UInt64? = nil, by p: Participant, at now: Duration
    ) throws(SessionError) -> [Emitted] {
        try requireEditor(p, "drag annotations")
        // Positions in the two dictionaries, each found once: a move changes both in place
        // (nothing is inserted or removed before it does, so the positions stay valid).
        guard let annotationIndex = annotations.index(forKey: id) else { throw SessionError(.notFound, "no annotation \"\(id)\"", field: "id") }
        let a = annotations.values[annotationIndex]
        guard let point = a.point else { throw SessionError(.notDraggable, "only point annotations can be dragged; \"\(id)\" is a \(a.shape.name)", field: "id") }
        guard point.draggable, a.enabled else {
            throw SessionError(.notDraggable, "annotation \"\(id)\" is \(a.enabled ? "not draggable" : "disabled")", field: "id")
        }
        if let coordinate { try validator.coordinate(coordinate, "coordinate") }
        if ifRevision != nil, next != .starting {
            throw .invalid("ifRevision", "only a drag's starting takes ifRevision (this drag is \(next.rawValue))")
        }
        let groupIndex = drags.index(forKey: id)
        let current = groupIndex.flatMap { drags.values[$0].drag(of: p.id)?.state } ?? .none
        guard next != .none, current.canMove(to: next) else {
            let hint = next == .none
                ? "; a drag reaches none through ending or canceling, never from the client"
                : ""
            throw SessionError(.illegalDragTransition, "illegal drag transition \(current.rawValue) → \(next.rawValue) for \"\(id)\"\(hint)", field: "state")
        }
        switch next {
        case .starting:
            // Before the policy: a sender that has not seen the latest change must catch up first.
            try requireRevision(ifRevision, of: a, for: "drag")
            return try startDrag(id, at: point.coordinate, by: p, now: now)
        case .dragging:
            guard let coordinate, let groupIndex else { throw .invalid("coordinate", "required for dragging") }
            return moveDrag(id, at: (annotationIndex, groupIndex), to: coordinate, by: p.id, now: now, first: current == .starting)
        case .ending: return endDrag(id, at: coordinate, by: p.id)
        case .canceling: return cancelDrag(of: id, by: p.id, reason: nil)
        case .none: return []
        }
    }

    private mutating func startDrag(_ id: String, at coordinate: Coordinate, by p: Participant, now: Duration) throws(SessionError) -> [Emitted] {
        var out: [Emitted] = []
        if settings.dragPolicy != .lastWriterWins, let holder = drags[id]?.drags.first {
            let holderRole = participants[holder.participant]?.role
            let preempts = settings.dragPolicy == .priority && p.role == .owner && holderRole != .owner
            guard preempts else {
                let name = participants[holder.participant]?.name ?? holder.participant
                throw SessionError(.dragConflict, "annotation \"\(id)\" is being dragged by \(name) (\(holder.participant))", holder: holder.participant)
            }
            out += cancelDrag(of: id, by: holder.participant, reason: .preempted)
        }
        let live = annotations[id]!.point!.coordinate
        let drag = ActiveDrag(participant: p.id, state: .starting, coordinate: live, lastActivity: now)
        if drags[id] == nil {
            drags[id] = DragGroup(origin: live, drags: [drag])
        } else {
            drags[id]!.drags.append(drag)
        }
        out.append(emit(.drag(annotation: id, participant: p.id, state: .starting, coordinate: live, reason: nil)))
        return out
    }

    /// A move. The first (`starting → dragging`) is a discrete event; later
    /// moves are transient and may be conflated.
    private mutating func moveDrag(
        _ id: String, at index: (annotation: [String: Annotation].Index, group: [String: DragGroup].Index),
        to coordinate: Coordinate, by pid: ParticipantID, now: Duration, first: Bool
    ) -> [Emitted] {
        drags.values[index.group].update(pid) {
            $0.state = .dragging
            $0.coordinate = coordinate
            $0.lastActivity = now
        }
        annotations.values[index.annotation].movePoint(to: coordinate)
        let key: ConflationKey? = first ? nil : .dragMove(annotation: id, participant: pid)
        return [emit(.drag(annotation: id, participant: pid, state: .dragging, coordinate: coordinate, reason: nil), transient: key)]
    }

    /// `ending` commits the drag's coordinate, then the drag returns to `none`. The commit is a
    /// change of the annotation: its revision becomes the `ending` event's seq (the encoder writes
    /// that seq as the event's `revision`).
    private mutating func endDrag(_ id: String, at coordinate: Coordinate?, by pid: ParticipantID) -> [Emitted] {
        let final = coordinate ?? drags[id]!.drag(of: pid)!.coordinate
        let before = committedAnnotation(id)
        let ended = endedDrag(id, pid)
        removeDrag(id, pid)
        setCoordinate(id, final)
        let revision = nextRevision
        annotations[id]?.revision = revision
        drags[id]?.origin = final
        var ending = emit(.drag(annotation: id, participant: pid, state: .ending, coordinate: final, reason: nil))
        ending.ended = ended
        remember(.drag, of: id, before: before, by: pid)
        return [ending, emit(.drag(annotation: id, participant: pid, state: .none, coordinate: final, reason: nil))]
    }

    /// `canceling` restores the coordinate the drag started from (unless
    /// other drags of the annotation go on), then the drag returns to `none`.
    mutating func cancelDrag(of id: String, by pid: ParticipantID, reason: DragEndReason?) -> [Emitted] {
        guard let group = drags[id], let ended = endedDrag(id, pid) else { return [] }
        removeDrag(id, pid)
        if drags[id] == nil { setCoordinate(id, group.origin) }
        let coordinate = annotations[id]!.point!.coordinate
        var canceling = emit(.drag(annotation: id, participant: pid, state: .canceling, coordinate: coordinate, reason: reason))
        canceling.ended = ended
        return [canceling, emit(.drag(annotation: id, participant: pid, state: .none, coordinate: coordinate, reason: reason))]
    }

    mutating func cancelAllDrags(of id: String, reason: DragEndReason) -> [Emitted] {
        var out: [Emitted] = []
        while let pid = drags[id]?.drags.last?.participant {
            out += cancelDrag(of: id, by: pid, reason: reason)
        }
        return out
    }

    /// Cancels every drag idle for longer than the lease timeout.
    public mutating func expireDrags(at now: Duration) -> [Emitted] {
        var out: [Emitted] = []
        for id in drags.keys.sorted() {
            for drag in drags[id]?.drags ?? [] where now - drag.lastActivity >= settings.leaseTimeout {
                out += cancelDrag(of: id, by: drag.participant, reason: .leaseExpired)
            }
        }
        return out
    }

    /// The earliest time a drag lease can expire, if any drag is in progress.
    public var nextDragExpiry: Duration? {
        drags.values.flatMap(\.drags).map { $0.lastActivity + settings.leaseTimeout }.min()
    }

    /// `pid`'s drag of `id` and its place among the annotation's drags, before it ends.
    private func endedDrag(_ id: String, _ pid: ParticipantID) -> EndedDrag? {
        guard let drags = drags[id]?.drags, let i = drags.firstIndex(where: { $0.participant == pid }) else { return nil }
        return EndedDrag(drag: drags[i], position: i)
    }

    /// The drags of annotation `id` in progress just before `events`, the last events this
    /// session emitted (those of one command, or their tail): a drag they end is listed as it
    /// was, one they start is not. What an `interest` message standing before the first of them
    /// lists (SPEC §4.7); a move among them leaves its drag as the move made it.
    public func drags(of id: String, before events: ArraySlice<Emitted>) -> [ActiveDrag] {
        var list = drags[id]?.drags ?? []
        for e in events.reversed() {
            guard case .drag(id, let pid, let state, _, _) = e.event else { continue }
            switch state {
            case .starting: list.removeAll { $0.participant == pid }
            case .canceling, .ending:
                if let ended = e.ended { list.insert(ended.drag, at: min(ended.position, list.count)) }
            case .none, .dragging: break
            }
        }
        return list
    }

    private mutating func removeDrag(_ id: String, _ pid: ParticipantID) {
        drags[id]?.drags.removeAll { $0.participant == pid }
        if drags[id]?.drags.isEmpty == true { drags[id] = nil }
    }

    private mutating func setCoordinate(_ id: String, _ c: Coordinate) {
        guard let index = annotations.index(forKey: id) else { return }
        annotations.values[index].movePoint(to: c)
    }
}
