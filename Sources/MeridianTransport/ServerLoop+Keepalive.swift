internal import CLibWebSockets

/// Keepalive: a PING to a connection quiet for ``TransportConfiguration/pingInterval``, and a
/// hard close (the peer sees 1006) of one quiet for ``TransportConfiguration/idleTimeout``.
/// Anything the peer sends counts: a message, a part of one, a PONG. A connection is never
/// dropped unasked: it gets its PING first, and from it the time a PING sent on schedule has to
/// be answered (idle timeout minus ping interval), even when the loop or its clock stalled past
/// the idle timeout before the PING was due.
///
/// Not lws's own keepalive (its retry policy's validity timers): lws keeps every connection's
/// timers in one list sorted by expiry and inserts by walking it, and each PONG re-inserts the
/// connection's timer at the far end, past every other connection's. With tens of thousands of
/// connections answering a PING every 30 s, that walk is quadratic. Here the tick visits a
/// share of the connection table instead, so each connection is looked at about once per
/// ``keepaliveSweep`` (a second, or a quarter of the ping interval if that is shorter), at a
/// constant cost per connection.
extension ServerLoop {
    /// A PING, the same bytes for every connection. Not empty: lws passes a PONG on
    /// (LWS_CALLBACK_RECEIVE_PONG) only when it has a payload.
    static let pingBytes = FrameBytes(wire: [0x89, 0x01, UInt8(ascii: "k")])!

    /// How long one sweep of the whole connection table takes.
    var keepaliveSweep: Duration {
        max(configuration.tickInterval, min(.seconds(1), configuration.pingInterval / 4))
    }

    /// At a tick: this tick's share of the table (at least one slot, the cursor wrapping).
    func sweepKeepalive() {
        let slotCount = connections.slotCount
        guard slotCount > 0 else { return }
        let ticksPerSweep = max(1, Int(keepaliveSweep / configuration.tickInterval))
        let share = max(1, (slotCount + ticksPerSweep - 1) / ticksPerSweep)
        let t = tickNow
        for _ in 0..<min(share, slotCount) {
            if keepaliveCursor >= slotCount { keepaliveCursor = 0 }
            if let connection = connections.connection(atSlot: keepaliveCursor) { keepAlive(connection, at: t) }
            keepaliveCursor += 1
        }
    }

    private func keepAlive(_ connection: Connection, at t: Duration) {
        guard connection.closing == nil, !connection.idleClosed else { return }
        if connection.lastPinged > connection.lastHeard {
            // Pinged in this quiet spell, once.
            guard t - connection.lastHeard >= configuration.idleTimeout,
                  t - connection.lastPinged >= configuration.idleTimeout - configuration.pingInterval else { return }
            connection.idleClosed = true
            counters.idleCloses += 1
            lws_set_timeout(connection.wsi, PENDING_TIMEOUT_USER_OK, LWS_TO_KILL_ASYNC)
        } else if t - connection.lastHeard >= configuration.pingInterval {
            connection.lastPinged = t
            counters.keepalivePings += 1
            enqueue(OutboundFrame(relayed: RelayableFrame(wire: Self.pingBytes, isShared: false), ledger: nil), for: connection)
        }
    }
}
