/// What one received event adds to a worker's stats: gathered while the event is read, added
/// to ``WorkerStats`` in one go.
struct EventCounts {
    var deliveries: UInt64 = 0
    var lost: UInt64 = 0
    var duplicates: UInt64 = 0
    var outOfOrder: UInt64 = 0
    var movesReceived: UInt64 = 0
    var movesOutsideCity: UInt64 = 0
    var movesConflated: UInt64 = 0
    var movesDelivered: UInt64 = 0
    /// A drag move's send-to-receipt latency, microseconds, when it is measured.
    var latency: UInt64?
}

extension WorkerStats {
    mutating func add(_ c: EventCounts) {
        deliveries += c.deliveries
        lost += c.lost
        duplicates += c.duplicates
        outOfOrder += c.outOfOrder
        movesReceived += c.movesReceived
        movesOutsideCity += c.movesOutsideCity
        movesConflated += c.movesConflated
        movesDelivered += c.movesDelivered
        if let latency = c.latency { _ = self.latency.record(latency) }
    }
}

extension SimulatedClient {
    /// Follows an event's seq (lost, duplicated and out-of-order events); nil when the client is
    /// not in a session, else its session and last seq (0: none yet).
    mutating func follow(seq: UInt64?, transient: Bool, everything: Bool, counted: Bool,
                         into counts: inout EventCounts) -> (session: Int, seq: UInt64)? {
        guard phase == .joined || phase == .leaving else { return nil }
        if counted { counts.deliveries += 1 }
        guard let seq, hasSeq else { return (session, 0) }
        if transient {
            if seq < self.seq {
                counts.outOfOrder += 1
            } else if seq > self.seq, everything {
                // A filtered stream marks what it left out only before its next discrete
                // event: there, a transient event ahead tells nothing.
                counts.lost += seq - self.seq
                self.seq = seq
            }
        } else if seq == self.seq + 1 {
            self.seq = seq
            seqMayRepeat = false
        } else if seq > self.seq + 1 {
            counts.lost += seq - self.seq - 1
            self.seq = seq
            seqMayRepeat = false
        } else if seq == self.seq {
            if seqMayRepeat { seqMayRepeat = false } else { counts.duplicates += 1 }
        } else {
            counts.outOfOrder += 1
        }
        return (session, self.seq)
    }

    /// Follows the move numbers of drags of annotation `a` (``MoveCounter``): a move number
    /// skipped, or a drag ending past the last move seen, is a move this receiver never got.
    mutating func countMove(_ d: DragFrame, of a: Int, coding: MoveCoding, viewport: Bool, counted: Bool,
                            into counts: inout EventCounts) {
        guard a < movesSeen.count else { return }
        let seen = movesSeen[a]
        switch d.state {
        case .starting:
            movesSeen[a] = 0
        case .dragging:
            guard let move = d.latitude.map(coding.move(latitude:)) else { return }
            if counted {
                counts.movesReceived += 1
                if viewport, a != city { counts.movesOutsideCity += 1 }
                if seen >= 0, move > seen + 1 { counts.movesConflated += UInt64(move - seen - 1) }
            }
            movesSeen[a] = move
        case .ending:
            if counted, seen >= 0, let last = d.latitude.map(coding.move(latitude:)), last > seen {
                counts.movesConflated += UInt64(last - seen)
            }
            movesSeen[a] = -1
        case .other:
            break
        }
    }
}
