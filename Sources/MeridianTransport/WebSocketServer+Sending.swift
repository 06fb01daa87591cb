internal import CLibWebSockets

extension WebSocketServer {
    /// Queues a frame for one connection. Service thread only.
    ///
    /// A non-nil `conflationKey` marks a transient frame: an earlier, not yet written frame with
    /// the same key is dropped and the new one goes at the end of the queue. Frames without a
    /// key are never dropped (except when the connection is closed).
    public func send(_ frame: OutboundFrame, to connection: ConnectionID, conflationKey: Int? = nil) {
        assertOnServiceThread()
        guard let connection = connections[connection], connection.closing == nil else { return }
        counters.deliveries += 1
        counters.bytesQueued += frame.bytes.count
        if connection.queue.append(frame, key: conflationKey) {
            counters.conflatedFrames += 1
        }
        let bytes = connection.queue.bytes
        if bytes > configuration.queueHardLimitBytes {
            counters.slowConsumerCloses += 1
            close(connection, code: 4008, reason: "slow consumer")
            return
        }
        if bytes > configuration.queueHighWaterBytes, connection.behindSince == nil {
            connection.behindSince = now
            behindConnections.insert(connection.id)
        }
        requestWritable(connection)
    }

    /// Closes a connection with `code` and `reason` (at most 123 bytes): its queued frames are
    /// dropped and the close frame goes out from its next WRITEABLE. Service thread only.
    public func close(_ connection: ConnectionID, code: UInt16, reason: String) {
        assertOnServiceThread()
        guard let connection = connections[connection] else { return }
        close(connection, code: code, reason: reason)
    }

    func close(_ connection: Connection, code: UInt16, reason: String) {
        guard connection.closing == nil else { return }
        connection.closing = (code, reason)
        closesToReport.append(connection.id)
        connection.refusingInput = true
        connection.inbound = []
        connection.queue.removeAll()
        markCaughtUp(connection)
        // Backstop: a peer that never reads never makes us WRITEABLE; drop it
        // after closeTimeout (the peer then sees 1006).
        lws_set_timeout(connection.wsi, PENDING_TIMEOUT_CLOSE_SEND, Int32(configuration.closeTimeout.clampedSeconds))
        requestWritable(connection)
    }

    func requestWritable(_ connection: Connection) {
        guard !connection.writableRequested else { return }
        connection.writableRequested = true
        lws_callback_on_writable(connection.wsi)
    }

    private func markCaughtUp(_ connection: Connection) {
        guard connection.behindSince != nil else { return }
        connection.behindSince = nil
        behindConnections.remove(connection.id)
    }

    /// Closes connections that stayed above the high-water mark for longer than the grace.
    func closeSlowConsumers() {
        guard !behindConnections.isEmpty else { return }
        let now = self.now
        for id in behindConnections {
            guard let connection = connections[id], let since = connection.behindSince else { continue }
            if now - since > configuration.slowConsumerGrace {
                counters.slowConsumerCloses += 1
                close(connection, code: 4008, reason: "slow consumer")
            }
        }
    }

    /// About once a second, gives back the write buffer and queue storage of connections that
    /// have written nothing for a second: an idle connection then costs little more than lws's
    /// own state. (lws copies what a write could not send at once, so the buffer is free
    /// after `lws_write` returns; the second of quiet is a margin on top.)
    func releaseIdleBuffers() {
        let now = tickNow
        guard now >= nextIdleSweep else { return }
        nextIdleSweep = now + .seconds(1)
        var released = 0
        for connection in connections.values where connection.queue.isEmpty && now - connection.lastWrite > .seconds(1) {
            if connection.writeBuffer.capacity > 0 { released += 1 }
            connection.writeBuffer.release()
            connection.queue.releaseStorage()
        }
        // Freed buffers sit between live allocations: hand their whole pages back to the system.
        if released > 0 { mrd_release_free_memory() }
    }

    /// LWS_CALLBACK_SERVER_WRITEABLE: exactly one `lws_write` per call.
    func writable(wsi: OpaquePointer, user: UnsafeMutableRawPointer?) -> Int32 {
        guard let connection = connection(for: user) else { return 0 }
        connection.writableRequested = false
        if let closing = connection.closing {
            // lws may deliver WRITEABLE again while it awaits the close answer; returning -1
            // then would drop the connection without waiting.
            guard !connection.closeFrameSent else { return 0 }
            connection.closeFrameSent = true
            var reason = closeReasonBytes(closing.reason)
            lws_close_reason(wsi, lws_close_status(rawValue: UInt32(closing.code)), &reason, reason.count)
            return -1
        }
        guard let firstSize = connection.queue.firstSize() else { return 0 }

        // The buffer of the previous write may be reused now: this is the next WRITEABLE.
        if firstSize > Self.writeChunk {
            connection.writeBuffer.reserve(firstSize)
        } else {
            connection.writeBuffer.shrink(ifAbove: Self.writeChunk)
            connection.writeBuffer.reserve(min(connection.queue.bytes, Self.writeChunk))
        }
        let payload = connection.writeBuffer.payload
        let used = connection.queue.drain(into: payload, capacity: connection.writeBuffer.capacity)
        // Whole pre-built frames, unmasked: RAW bypasses lws framing (no extensions are offered).
        connection.lastWrite = tickNow
        let written = lws_write(wsi, payload.assumingMemoryBound(to: UInt8.self), used, mrd_lws_write_raw())
        if written < 0 { return -1 }
        if connection.queue.bytes <= configuration.queueHighWaterBytes {
            markCaughtUp(connection)
        }
        if !connection.queue.isEmpty { requestWritable(connection) }
        return 0
    }
}
