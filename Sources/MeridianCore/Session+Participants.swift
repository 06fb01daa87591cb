extension Session {
    static let palette: [Color] = [
        "#e6194b", "#3cb44b", "#4363d8", "#f58231", "#911eb4", "#42d4f4",
        "#f032e6", "#9a6324", "#469990", "#800000", "#808000", "#000075",
    ].map { Color(hex: $0)! }

    /// Adds a participant. Hidden participants are not announced.
    public mutating func join(_ request: JoinRequest, at now: Duration) -> Result<(ParticipantID, [Emitted]), SessionError> {
        do throws(SessionError) {
            try validator.identifier(request.name, "name")
            try validator.text(request.name, max: limits.maxNameLength, "name")
            guard participants.count < limits.maxParticipants else {
                throw SessionError(.limitExceeded, "session \(id) is full (\(limits.maxParticipants) participants)")
            }
            if let previous = request.previous { try validator.identifier(previous, "previousParticipant") }
            if let pid = request.participant {
                try validator.identifier(pid, "participant")
                guard participants[pid] == nil else {
                    throw SessionError(.alreadyExists, "participant \(pid) is already in session \(id)", field: "participant")
                }
            }
        } catch {
            return .failure(error)
        }
        joinCount += 1
        var pid = request.participant ?? "p\(joinCount)"
        while request.participant == nil && participants[pid] != nil {
            joinCount += 1
            pid = "p\(joinCount)"
        }
        let color = request.color ?? Self.palette[(joinCount - 1) % Self.palette.count]
        let participant = Participant(id: pid, name: request.name, color: color, role: request.role, hidden: request.hidden)
        participants[pid] = participant
        joinOrder.append(pid)
        inheritHistory(from: request.previous, of: request.previousEpoch, to: pid)
        guard !request.hidden else { return .success((pid, [])) }
        if batchesPresence {
            pendingJoins.append(pid)
            return .success((pid, []))
        }
        return .success((pid, flushPresence() + [emit(.participantJoined(participant))]))
    }

    /// Removes a participant: its drags are canceled, its camera lease
    /// released and a callout anchored to its location dismissed.
    public mutating func leave(_ pid: ParticipantID, reason: String, at now: Duration) -> [Emitted] {
        guard let p = participants[pid] else { return [] }
        let batched = batchesPresence
        var out: [Emitted] = batched ? [] : flushPresence()
        for annotation in drags.keys.sorted() where drags[annotation]?.drag(of: pid) != nil {
            out += cancelDrag(of: annotation, by: pid, reason: .holderLeft)
        }
        if cameraLeaseHolder == pid {
            cameraLeaseHolder = nil
            out.append(emit(.cameraLease(holder: nil, reason: "holder_left")))
        }
        if case .participant(pid) = callout?.anchor {
            out += dismissCallout(reason: "participant_left")
        }
        participants[pid] = nil
        if let index = joinOrder.firstIndex(of: pid) { joinOrder.remove(at: index) }
        forgetOldHistories()
        for other in participants.keys where participants[other]?.following == .participant(pid) {
            participants[other]?.following = nil
        }
        if !p.hidden {
            if batched {
                pendingLeaves.append(PresenceLeave(participant: pid, reason: reason))
            } else {
                out.append(emit(.participantLeft(pid, reason: reason)))
            }
        }
        return out
    }
}

extension Session {
    /// Whether joins and leaves wait to be announced together: in a session of more than
    /// ``SessionLimits/presenceBatchAbove`` participants, one event per join would cost every
    /// member a frame per join.
    var batchesPresence: Bool { participants.count > limits.presenceBatchAbove }

    /// The joins and leaves waiting to be announced, as one discrete `presence` event (none
    /// if nothing waits). The server calls it on every tick, and before anything else changes
    /// the session, so a newcomer is announced before anything it does.
    public mutating func flushPresence() -> [Emitted] {
        guard !pendingJoins.isEmpty || !pendingLeaves.isEmpty else { return [] }
        let joined = pendingJoins.compactMap { participants[$0] }
        let left = pendingLeaves
        pendingJoins.removeAll()
        pendingLeaves.removeAll()
        return [emit(.presence(joined: joined, left: left))]
    }
}
