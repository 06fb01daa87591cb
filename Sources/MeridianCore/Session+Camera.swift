extension Session {
    mutating func moveCamera(_ target: CameraTarget, _ phase: CameraPhase, viewport: Viewport?, by p: Participant) throws(SessionError) -> Accepted {
        if target == .shared {
            try requireEditor(p, "move the shared camera")
            guard cameraLeaseHolder == p.id else {
                throw SessionError(.cameraLeaseRequired, "moving the shared camera needs the camera lease", holder: cameraLeaseHolder)
            }
            guard viewport == nil else { throw .invalid("viewport", "only the own camera has a viewport") }
        }
        if let viewport { try validator.viewport(viewport, "viewport") }
        var applied = phase
        var adjusted: Camera?
        if let requested = phase.camera {
            let normal = try validator.camera(requested, "camera")
            let constraints = settings.constraints
            let clamped = constraints.clamp(normal)
            if clamped != normal, constraints.policy == .reject {
                throw SessionError(.cameraOutOfBounds, "camera: outside the session's camera constraints", field: "camera")
            }
            // Bounds may reach where no camera can look (latitude beyond Web
            // Mercator, longitude 180): the clamped camera is put in normal form too.
            let allowed = try validator.camera(clamped, "camera")
            if allowed != requested { adjusted = allowed }
            switch phase {
            case .changing: applied = .changing(allowed)
            case .end(_, let animated): applied = .end(allowed, animated: animated)
            case .begin: break
            }
        }
        switch target {
        case .own:
            if let camera = applied.camera { participants[p.id]?.camera = camera }
            if let viewport { participants[p.id]?.viewport = viewport }
        case .shared:
            if let camera = applied.camera { sharedCamera = camera }
        }
        let key: ConflationKey? = if case .changing = applied { target == .own ? .ownCamera(p.id) : .sharedCamera } else { nil }
        // An own-camera event carries the mover's current viewport, so a newer
        // changing frame that replaces an unsent one loses no viewport change.
        let carried = target == .own ? participants[p.id]?.viewport : nil
        let event = emit(.camera(target, participant: p.id, applied, viewport: carried), transient: key)
        return Accepted(events: [event], camera: adjusted)
    }

    mutating func acquireCameraLease(by p: Participant, force: Bool) throws(SessionError) -> [Emitted] {
        try requireEditor(p, "hold the camera lease")
        if let holder = cameraLeaseHolder, holder != p.id {
            let holderIsOwner = participants[holder]?.role == .owner
            guard force, p.role == .owner, !holderIsOwner else {
                let name = participants[holder]?.name ?? holder
                throw SessionError(.cameraLeaseHeld, "the camera lease is held by \(name) (\(holder))", holder: holder)
            }
            cameraLeaseHolder = p.id
            return [emit(.cameraLease(holder: p.id, reason: "taken_over"))]
        }
        guard cameraLeaseHolder == nil else { return [] }
        cameraLeaseHolder = p.id
        return [emit(.cameraLease(holder: p.id, reason: "acquired"))]
    }

    mutating func releaseCameraLease(by p: Participant) throws(SessionError) -> [Emitted] {
        // The role first, as for every shared-camera request: a viewer never holds the lease.
        try requireEditor(p, "release the camera lease")
        guard cameraLeaseHolder == p.id else {
            throw SessionError(.cameraLeaseRequired, "you do not hold the camera lease", holder: cameraLeaseHolder)
        }
        cameraLeaseHolder = nil
        return [emit(.cameraLease(holder: nil, reason: "released"))]
    }

    mutating func follow(_ target: FollowTarget?, by p: Participant) throws(SessionError) -> [Emitted] {
        if case .participant(let other) = target {
            guard other != p.id else { throw .invalid("target", "cannot follow yourself") }
            guard let o = participants[other], !o.hidden else {
                throw SessionError(.notFound, "no participant \(other)", field: "target")
            }
        }
        participants[p.id]?.following = target
        return [emit(.follow(p.id, target))]
    }
}
