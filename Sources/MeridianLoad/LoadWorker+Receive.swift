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
                clients[id]!.nextActionAt = LoadClock.nowMicros() + firstGrantDelay(of: id)
                clients[id]!.granted = true
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

    /// A discrete or transient event other than a drag: counted, and its seq followed.
    func event(_ m: FrameScanner, _ id: Int) {
        let now = readAt ?? LoadClock.nowMicros()
        let seq = m.integer(after: .seq)
        var counts = EventCounts()
        let counted = timeline.inWindow(now)
        let everything = configuration.interest == .everything
        let noted = clients.update(id) { $0.follow(seq: seq, transient: seq != nil && m.contains(.transient),
                                                   everything: everything, counted: counted, into: &counts) }
        stats.add(counts)
        if let noted, let noted { noteSessionSeq(noted.session, noted.seq) }
    }

    /// A drag event (``DragFrame``): counted, its seq followed, and a load-tool drag's moves and
    /// latency taken. The hot path: every receiver reads every move. Each of the worker's
    /// properties is reached once (each access of a class's property is checked at run time).
    func dragEvent(_ d: DragFrame, _ id: Int, now: UInt64) {
        let counted = timeline.inWindow(now)
        let everything = configuration.interest == .everything
        var counts = EventCounts()
        let annotation = d.annotation.flatMap { $0 < UInt64(moveCodings.count) ? Int($0) : nil }
        let coding = annotation.map { moveCodings[$0] }
        let noted = clients.update(id) { c -> (session: Int, seq: UInt64)? in
            guard let noted = c.follow(seq: d.seq, transient: d.transient, everything: everything, counted: counted, into: &counts) else {
                return nil
            }
            if let annotation, let coding { c.countMove(d, of: annotation, coding: coding, viewport: !everything, counted: counted, into: &counts) }
            return noted
        }
        guard let noted, let noted else { return }
        if let coding, d.state == .dragging, let lon = d.longitude, let latency = coding.latency(longitude: lon, now: now) {
            if counted { counts.latency = latency }
            if now >= latency, timeline.inWindow(now - latency) { counts.movesDelivered = 1 }
        }
        stats.add(counts)
        noteSessionSeq(noted.session, noted.seq)
    }

    func noteSessionSeq(_ session: Int, _ seq: UInt64) {
        guard seq > 0 else { return }
        if session >= sessionSeqs.count { sessionSeqs.append(contentsOf: repeatElement(0, count: session - sessionSeqs.count + 1)) }
        if seq > sessionSeqs[session] { sessionSeqs[session] = seq }
    }
}
