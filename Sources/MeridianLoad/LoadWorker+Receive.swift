import MeridianClientTransport

extension LoadWorker {
    func welcomed(_ m: FrameScanner, _ id: Int, on group: ClientGroupLoop) {
        let now = LoadClock.nowMicros()
        guard let c = clients[id] else { return }
        clients[id]!.phase = .joined
        if clients[id]!.movesSeen.isEmpty { clients[id]!.movesSeen = Array(repeating: -1, count: configuration.draggers) }
        if let seq = m.integer(after: .seq) {
            clients[id]!.seq = seq
            clients[id]!.hasSeq = true
            clients[id]!.seqMayRepeat = false
            noteSessionSeq(c.session, seq)
        }
        _ = stats.joinLatency.record(now - c.connectStartedAt)
        _ = stats.joinRequestLatency.record(now - c.joinSentAt)
        if configuration.interest == .viewport { countSeeds(m, c) }
        clients[id]!.nextActionAt = now
        switch c.role {
        case .dragger(let n):
            // Create the dragged annotation (in the dragger's city on a big map); `already_exists`
            // (another dragger, or a big map's seeder, was first) is fine.
            let at = configuration.interest == .viewport ? cities.centre(n) : GeoPoint(latitude: Double(c.session % 80), longitude: 0)
            send(#"{"type":"annotation.add","ref":\#(ref(id, .annotationAdd)),"annotation":{"id":"d\#(n)","type":"point","draggable":true,"coordinate":{"latitude":\#(at.latitude),"longitude":\#(at.longitude)}}}"#, to: id, on: group)
        default:
            clients[id]!.ready = true
        }
    }

    /// The seeded annotations (`seed <n>`) in a big-map welcome's snapshot, and how many of them
    /// lie outside the joiner's city (read from the part of the welcome a client keeps).
    private func countSeeds(_ m: FrameScanner, _ c: SimulatedClient) {
        m.forEachInteger(after: .seedTitle) { n in
            stats.welcomeAnnotations += 1
            if cities.city(ofSeed: Int(n)) != c.city { stats.welcomeAnnotationsOutsideCity += 1 }
        }
    }

    /// A `skipped` marker (every discrete event up to its seq that the stream did not carry was
    /// outside the client's area) or an `interest` message (the area as of its seq; the discrete
    /// event that brought an annotation in may follow with that same seq).
    func accountFor(_ m: FrameScanner, _ id: Int) {
        guard let c = clients[id], c.hasSeq, let seq = m.integer(after: .seq) else { return }
        let isInterest = m.typeIs("interest")
        if seq > c.seq {
            clients[id]!.seq = seq
            clients[id]!.seqMayRepeat = isInterest
            noteSessionSeq(c.session, seq)
        } else if seq < c.seq, !isInterest {
            stats.outOfOrder += 1
        }
    }

    func answer(_ m: FrameScanner, from id: Int) {
        guard clients[id] != nil, let ref = m.integer(after: .ref), let kind = RefKind.of(ref) else { return }
        let isAck = m.typeIs("ack")
        let code = isAck ? nil : m.string(after: .code)
        switch kind {
        case .annotationAdd:
            if isAck || code == "already_exists" { clients[id]!.ready = true; return }
        case .dragStart:
            if isAck {
                stats.dragsGranted += 1
                clients[id]!.drag = .moving(left: configuration.movesPerDrag)
                clients[id]!.nextActionAt = LoadClock.nowMicros()
                return
            }
            // The answer to a repeated `starting` (sent when the first one's answer was slow) must
            // not end the drag the first one was granted.
            if case .moving = clients[id]!.drag { return }
            if case .ending = clients[id]!.drag { return }
            clients[id]!.drag = .idle
            if code == "drag_conflict" {
                stats.dragsRefused += 1
                // Try again after a few move intervals.
                clients[id]!.nextActionAt = LoadClock.nowMicros() + 5 * moveInterval
                return
            }
        case .dragMove, .dragEnd:
            // E.g. the lease expired under a stalled server: start over.
            if !isAck { clients[id]!.drag = .idle }
        default:
            break
        }
        if let code { stats.errors[code, default: 0] += 1 }
    }

    func event(_ m: FrameScanner, _ id: Int) {
        guard let c = clients[id], c.phase == .joined || c.phase == .leaving else { return }
        let now = LoadClock.nowMicros()
        let counted = timeline.inWindow(now)
        if counted { stats.deliveries += 1 }
        if let seq = m.integer(after: .seq), c.hasSeq {
            let transient = m.contains(.transient)
            if transient {
                if seq < c.seq {
                    stats.outOfOrder += 1
                } else if seq > c.seq, configuration.interest == .everything {
                    // A filtered stream marks what it left out only before its next discrete
                    // event: there, a transient event ahead tells nothing.
                    stats.lost += seq - c.seq
                    clients[id]!.seq = seq
                }
            } else if seq == c.seq + 1 {
                clients[id]!.seq = seq
                clients[id]!.seqMayRepeat = false
            } else if seq > c.seq + 1 {
                stats.lost += seq - c.seq - 1
                clients[id]!.seq = seq
                clients[id]!.seqMayRepeat = false
            } else if seq == c.seq {
                if c.seqMayRepeat { clients[id]!.seqMayRepeat = false } else { stats.duplicates += 1 }
            } else {
                stats.outOfOrder += 1
            }
            noteSessionSeq(c.session, clients[id]!.seq)
        }
        if m.typeIs("drag"), let annotation = m.integer(after: .draggedID), annotation < UInt64(moveCodings.count) {
            let n = Int(annotation)
            countMoves(m, id, n, counted: counted)
            if m.contains(.dragging), let lon = m.double(after: .longitude), let latency = moveCodings[n].latency(longitude: lon, now: now) {
                if counted { _ = stats.latency.record(latency) }
                if now >= latency, timeline.inWindow(now - latency) { stats.movesDelivered += 1 }
            }
        }
    }

    /// Follows each drag's move numbers (``MoveCounter``): a move number skipped, or a drag ending
    /// past the last move seen, is a move this receiver never got.
    private func countMoves(_ m: FrameScanner, _ id: Int, _ a: Int, counted: Bool) {
        guard a < clients[id]!.movesSeen.count else { return }
        let coding = moveCodings[a]
        let seen = clients[id]!.movesSeen[a]
        if m.contains(.starting) {
            clients[id]!.movesSeen[a] = 0
        } else if m.contains(.dragging) {
            guard let move = m.double(after: .latitude).map(coding.move(latitude:)) else { return }
            if counted {
                stats.movesReceived += 1
                if configuration.interest == .viewport, a != clients[id]!.city { stats.movesOutsideCity += 1 }
                if seen >= 0, move > seen + 1 { stats.movesConflated += UInt64(move - seen - 1) }
            }
            clients[id]!.movesSeen[a] = move
        } else if m.contains(.ending) {
            if counted, seen >= 0, let last = m.double(after: .latitude).map(coding.move(latitude:)), last > seen {
                stats.movesConflated += UInt64(last - seen)
            }
            clients[id]!.movesSeen[a] = -1
        }
    }

    func noteSessionSeq(_ session: Int, _ seq: UInt64) {
        if seq > stats.sessionSeq[session, default: 0] { stats.sessionSeq[session] = seq }
    }
}
