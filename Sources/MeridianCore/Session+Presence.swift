extension Session {
    mutating func setMapLoad(_ m: MapLoad, by p: Participant) throws(SessionError) -> [Emitted] {
        if m.state == .failed {
            guard let message = m.message, !message.isEmpty else { throw .invalid("message", "required when state is failed") }
            try validator.text(message, max: limits.maxTextLength, "message")
        } else if m.message != nil {
            throw .invalid("message", "only allowed when state is failed")
        }
        participants[p.id]?.mapLoad = m
        return [emit(.mapLoad(p.id, m))]
    }

    /// Stores and broadcasts the participant's location in the form others may
    /// see: a `reduced` location never leaves the session more precise than
    /// a coarse grid cell. Updates are transient; clearing is discrete.
    mutating func setLocation(_ location: UserLocation?, by p: Participant) throws(SessionError) -> [Emitted] {
        guard let location else {
            participants[p.id]?.location = nil
            var out = [emit(.location(p.id, nil))]
            if case .participant(p.id) = callout?.anchor { out += dismissCallout(reason: "location_cleared") }
            return out
        }
        try validator.location(location, "location")
        let shared = location.shared
        participants[p.id]?.location = shared
        return [emit(.location(p.id, shared), transient: .location(p.id))]
    }

    mutating func configure(_ patch: SettingsPatch, by p: Participant, at now: Duration) throws(SessionError) -> [Emitted] {
        guard p.role == .owner else { throw SessionError(.forbidden, "role \(p.role.rawValue) may not change session settings") }
        return try applySettings(patch)
    }

    /// Validates and applies a settings change; a policy change cancels drags in progress.
    mutating func applySettings(_ patch: SettingsPatch) throws(SessionError) -> [Emitted] {
        if let url = patch.styleURL { try validator.text(url, max: 2_048, "settings.styleURL") }
        if let t = patch.leaseTimeout, !(limits.minLeaseTimeout...limits.maxLeaseTimeout).contains(t) {
            throw .invalid("settings.leaseTimeoutMs", "must be within \(limits.minLeaseTimeout)...\(limits.maxLeaseTimeout)")
        }
        if let c = patch.constraints { try validator.constraints(c, "settings.constraints") }
        var out: [Emitted] = []
        if let policy = patch.dragPolicy, policy != settings.dragPolicy {
            // Drags started under one policy are not carried into another.
            for id in drags.keys.sorted() { out += cancelAllDrags(of: id, reason: .policyChanged) }
            settings.dragPolicy = policy
        }
        if let v = patch.styleURL { settings.styleURL = v }
        if let v = patch.tint { settings.tint = v }
        if let v = patch.leaseTimeout { settings.leaseTimeout = v }
        if let v = patch.constraints { settings.constraints = v }
        out.append(emit(.settings(settings)))
        return out
    }
}
