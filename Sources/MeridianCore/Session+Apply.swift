extension Session {
    /// Applies one command from a participant at `now`.
    public mutating func apply(_ command: Command, from pid: ParticipantID, at now: Duration) -> ApplyResult {
        guard let participant = participants[pid] else {
            return .failure(SessionError(.notFound, "participant \(pid) is not in session \(id)"))
        }
        do throws(SessionError) {
            if participant.hidden {
                throw SessionError(.forbidden, "hidden participants watch only; \(command.name) is not allowed")
            }
            return .success(try dispatch(command, from: participant, at: now))
        } catch {
            return .failure(error)
        }
    }

    private mutating func dispatch(_ command: Command, from p: Participant, at now: Duration) throws(SessionError) -> Accepted {
        switch command {
        case .camera(let target, let phase, let viewport):
            return try moveCamera(target, phase, viewport: viewport, by: p)
        case .acquireCameraLease(let force):
            return Accepted(events: try acquireCameraLease(by: p, force: force))
        case .releaseCameraLease:
            return Accepted(events: try releaseCameraLease(by: p))
        case .follow(let target):
            return Accepted(events: try follow(target, by: p))
        case .addAnnotation(let a):
            return Accepted(events: try addAnnotation(a, by: p))
        case .updateAnnotation(let id, let patch, let ifRevision):
            return Accepted(events: try updateAnnotation(id, patch, ifRevision: ifRevision, by: p, at: now))
        case .removeAnnotation(let id, let ifRevision):
            return Accepted(events: try removeAnnotation(id, ifRevision: ifRevision, by: p, at: now))
        case .select(let id):
            return Accepted(events: try select(id, by: p))
        case .deselect:
            return Accepted(events: deselect(by: p))
        case .showCallout(let c):
            return Accepted(events: try showCallout(c, by: p))
        case .hideCallout:
            return Accepted(events: try hideCallout(by: p))
        case .tapCallout(let part):
            return Accepted(events: try tapCallout(part, by: p))
        case .drag(let id, let state, let coordinate, let ifRevision):
            return Accepted(events: try drag(id, to: state, coordinate: coordinate, ifRevision: ifRevision, by: p, at: now))
        case .mapLoad(let m):
            return Accepted(events: try setMapLoad(m, by: p))
        case .location(let l):
            return Accepted(events: try setLocation(l, by: p))
        case .configure(let patch):
            return Accepted(events: try configure(patch, by: p, at: now))
        case .undo:
            return Accepted(events: try revert(by: p, redo: false))
        case .redo:
            return Accepted(events: try revert(by: p, redo: true))
        }
    }

    func requireEditor(_ p: Participant, _ action: String) throws(SessionError) {
        guard p.role.canEdit else { throw SessionError(.forbidden, "role \(p.role.rawValue) may not \(action)") }
    }

    func existingAnnotation(_ id: String) throws(SessionError) -> Annotation {
        guard let a = annotations[id] else { throw SessionError(.notFound, "no annotation \"\(id)\"", field: "id") }
        return a
    }
}
