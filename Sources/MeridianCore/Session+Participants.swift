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
        joinOrder[pid] = joinCount
        guard !request.hidden else { return .success((pid, [])) }
        return .success((pid, [emit(.participantJoined(participant))]))
    }

    /// Removes a participant: its drags are canceled, its camera lease
    /// released and a callout anchored to its location dismissed.
    public mutating func leave(_ pid: ParticipantID, reason: String, at now: Duration) -> [Emitted] {
        guard let p = participants[pid] else { return [] }
        var out: [Emitted] = []
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
        joinOrder[pid] = nil
        for other in participants.keys where participants[other]?.following == .participant(pid) {
            participants[other]?.following = nil
        }
        if !p.hidden { out.append(emit(.participantLeft(pid, reason: reason))) }
        return out
    }
}
