extension LoadWorker {
    func welcomed(_ m: FrameScanner, _ id: Int) {
        let now = LoadClock.nowMicros()
        guard let c = clients[id] else { return }
        clients[id]!.phase = .joined
        if clients[id]!.movesSeen.isEmpty { clients[id]!.movesSeen = Array(repeating: -1, count: configuration.draggers) }
        if let seq = m.integer(after: .seq) {
            clients[id]!.seq = seq
            clients[id]!.hasSeq = true
            noteSessionSeq(c.session, seq)
        }
        _ = stats.joinLatency.record(now - c.connectStartedAt)
        clients[id]!.nextActionAt = now
        switch c.role {
        case .dragger(let annotation):
            // Create the dragged annotation; `already_exists` (another dragger was first) is fine.
            let lat = Double(c.session % 80)
            send(#"{"type":"annotation.add","ref":\#(ref(id, .annotationAdd)),"annotation":{"id":"\#(annotation)","type":"point","draggable":true,"coordinate":{"latitude":\#(lat),"longitude":0}}}"#, to: id)
        default:
            clients[id]!.ready = true
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
                if seq < c.seq { stats.outOfOrder += 1 }
                else if seq > c.seq { stats.lost += seq - c.seq; clients[id]!.seq = seq }
            } else if seq == c.seq + 1 {
                clients[id]!.seq = seq
            } else if seq > c.seq + 1 {
                stats.lost += seq - c.seq - 1
                clients[id]!.seq = seq
            } else if seq == c.seq {
                stats.duplicates += 1
            } else {
                stats.outOfOrder += 1
            }
            noteSessionSeq(c.session, clients[id]!.seq)
        }
        if m.typeIs("drag") {
            countMoves(m, id, counted: counted)
            if counted, m.contains(.dragging),
               let lon = m.double(after: .longitude), let latency = LoadClock.latency(longitude: lon, now: now) {
                _ = stats.latency.record(latency)
            }
        }
    }

    /// Follows each drag's move numbers (``MoveCounter``): a move number skipped, or a drag ending
    /// past the last move seen, is a move this receiver never got.
    private func countMoves(_ m: FrameScanner, _ id: Int, counted: Bool) {
        guard let annotation = m.integer(after: .draggedID), annotation < UInt64(clients[id]!.movesSeen.count) else { return }
        let a = Int(annotation)
        let seen = clients[id]!.movesSeen[a]
        if m.contains(.starting) {
            clients[id]!.movesSeen[a] = 0
        } else if m.contains(.dragging) {
            guard let move = m.double(after: .latitude).map(MoveCounter.move(latitude:)) else { return }
            if counted {
                stats.movesReceived += 1
                if seen >= 0, move > seen + 1 { stats.movesConflated += UInt64(move - seen - 1) }
            }
            clients[id]!.movesSeen[a] = move
        } else if m.contains(.ending) {
            if counted, seen >= 0, let last = m.double(after: .latitude).map(MoveCounter.move(latitude:)), last > seen {
                stats.movesConflated += UInt64(last - seen)
            }
            clients[id]!.movesSeen[a] = -1
        }
    }

    func noteSessionSeq(_ session: Int, _ seq: UInt64) {
        if seq > stats.sessionSeq[session, default: 0] { stats.sessionSeq[session] = seq }
    }
}
