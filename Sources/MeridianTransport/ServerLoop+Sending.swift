import MeridianTransportCore
internal import CLibWebSockets
internal import MeridianProtocol

extension ServerLoop {
    /// Queues a frame for one connection. Frames are never dropped
    /// (except when the connection is closed, or as ``broadcast(_:to:except:superseding:)``
    /// allows).
    public func send(_ frame: OutboundFrame, to connection: ConnectionID) {
        guard let connection = connections[connection] else { return }
        enqueue(frame, for: connection)
        counters.deliveries += 1
        counters.bytesQueued += frame.byteCount
        if frame.wire.messageType >= 0 { counters.messagesOut[Int(frame.wire.messageType)] += 1 }
    }

    /// Queues the same frame for every connection in `members` but `skip`.
    ///
    /// `previous`, when given, is an earlier transient frame of the same kind (a camera move,
    /// a drag move of one participant): wherever it still waits unwritten in a queue that is
    /// behind (``TransportConfiguration/conflateAboveBytes``), this frame makes it redundant,
    /// and it is skipped. The caller guarantees that every connection that was sent
    /// `previous` is in `members` now, or has left the audience of both.
    public func broadcast(
        _ frame: OutboundFrame, to members: [ConnectionID], except skip: ConnectionID? = nil,
        superseding previous: OutboundFrame? = nil
    ) {
        previous?.superseded = true
        let exempt = frame.ledger?.isWithinBudget ?? false
        let highWater = configuration.queueHighWaterBytes
        var sent = 0
        var backlogged: [ConnectionID] = []
        var waiting: [(ConnectionID, busy: Bool)] = []
        var allowance = input.writeAllowance
        var directWrites = input.directWrites
        let turnsAtPassEnd = writesTurnsAtPassEnd
        connections.withHotStates { hots in
            members.withUnsafeBufferPointer { ids in
                for id in ids where id != skip {
                    let slot = id.slot
                    guard slot < hots.count, let hot = hots[slot], hot.pointee.id == id, !hot.pointee.isClosing else { continue }
                    // Only asked while end-of-pass writes are allowed: a loaded loop's fan-out
                    // reads no more than it did without them.
                    let idle = directWrites > 0 && !hot.pointee.writableRequested
                        && hot.pointee.queue.isEmpty && !hot.pointee.throttled
                    hot.pointee.queue.append(frame, exempt: exempt)
                    if hot.pointee.queue.bytes > highWater { backlogged.append(id) }
                    if idle {
                        // Written at the end of the pass (``flushAtPassEnd()``), with whatever
                        // else the pass queues for it.
                        directWrites -= 1
                        hot.pointee.writableRequested = true
                        input.flushes.append(id)
                    } else if !hot.pointee.writableRequested {
                        hot.pointee.writableRequested = true
                        if allowance.take(busy: hot.pointee.throttled) {
                            // Its turn is now: written at the end of the pass too (it has nothing
                            // partly written, or it would have its WRITEABLE asked for already).
                            if turnsAtPassEnd { input.flushes.append(id) } else { lws_callback_on_writable(hot.pointee.wsi) }
                        } else {
                            waiting.append((id, hot.pointee.throttled))
                        }
                    }
                    sent += 1
                }
            }
        }
        input.writeAllowance = allowance
        input.directWrites = directWrites
        // Writes past the pass's allowance wait their turn (ServerLoop+Input.swift). One owed a
        // prompt answer is asked for at once when that answer is queued.
        for (id, busy) in waiting {
            guard let connection = connections[id] else { continue }
            connection.writeDeferred = true
            waitToWrite(id, busy: busy)
        }
        for id in backlogged {
            if let connection = connections[id] { checkBacklog(of: connection) }
        }
        counters.deliveries += sent
        counters.bytesQueued += sent * frame.byteCount
        if frame.wire.messageType >= 0 { counters.messagesOut[Int(frame.wire.messageType)] += sent }
    }

    /// After the pass's input, and after work from other threads: writes the queues of the
    /// members a broadcast found idle (``TransportConfiguration/directWritesPerPass``), or whose
    /// turn came, each in one write, outside WRITEABLE: in batches of
    /// ``TransportConfiguration/writeBatch`` (``SendRing``) where io_uring can be used, else one
    /// `lws_write` each. What a socket does not take goes to lws, which keeps it and sends it
    /// before anything written after it; a socket that failed is closed by lws in its next pass.
    ///
    /// Once a pass has written for ``TransportConfiguration/writeSlice``, it stops when input
    /// waits (``InputReadiness``): the members left are written first in the next pass, and
    /// gather whatever that pass's input queues for them.
    func flushAtPassEnd() {
        guard !input.flushes.isEmpty else { return }
        // Writes asked for while these are made (more queued than one write takes) wait for the
        // next flush.
        var batch = input.flushes
        input.flushes = flushSpare
        defer {
            batch.removeAll(keepingCapacity: true)
            flushSpare = batch
        }
        // A loaded loop's writes are bounded by its allowance of writes a pass instead.
        let slicing = input.gauge.isLight
        let slice = configuration.writeSlice
        var end = input.writesEnd
        var next = batch.startIndex
        while next < batch.endIndex {
            // At least eight writes a pass; every eighth write, the batch so far is made and
            // the clock read, and once the slice is spent, whether input waits.
            if slicing, next & 7 == 0, let until = end {
                completeBatchedWrites()
                if now >= until {
                    if !readiness.inputWaits {
                        end = now + slice
                        input.writesEnd = end
                    } else {
                        counters.writeSlicesSpent += 1
                        input.flushes.insert(contentsOf: batch[next...], at: 0)
                        break
                    }
                }
            }
            let id = batch[next]
            next += 1
            guard let connection = connections[id], connection.writableRequested else { continue }
            connection.writableRequested = false
            // Closing meanwhile (the close goes out from WRITEABLE), or lws still holds part of
            // an earlier write (the socket is full: the queue waits for WRITEABLE, and grows, as
            // a slow reader's must).
            guard connection.closing == nil, lws_partial_buffered(connection.wsi) == 0 else {
                requestWritable(connection)
                continue
            }
            if slicing, end == nil {
                end = now + slice
                input.writesEnd = end
            }
            counters.directWrites += 1
            writeAtPassEnd(connection)
        }
        completeBatchedWrites()
    }

    /// Whether a write whose turn came is made at the end of the pass (no WRITEABLE round trip
    /// through the event loop: with libev two `epoll_ctl` and a wake-up per write), rather than
    /// from WRITEABLE. Never over TLS.
    var writesTurnsAtPassEnd: Bool { configuration.turnWritesAtPassEnd && !configuration.usesTLS }

    /// A write whose turn came: at the end of the pass, or from WRITEABLE when lws still holds
    /// part of an earlier write (the socket is full) or turns are written from WRITEABLE.
    func grantWrite(_ connection: Connection) {
        if writesTurnsAtPassEnd, connection.closing == nil, lws_partial_buffered(connection.wsi) == 0 {
            input.flushes.append(connection.id)
        } else {
            lws_callback_on_writable(connection.wsi)
        }
    }

    func enqueue(_ frame: OutboundFrame, for connection: Connection) {
        guard connection.closing == nil else { return }
        connection.queue.append(frame, exempt: frame.ledger?.isWithinBudget ?? false)
        if connection.queue.bytes > configuration.queueHighWaterBytes { checkBacklog(of: connection) }
        requestWritable(connection)
    }

    /// A queue above the high-water mark: drop what newer frames superseded, then mark it behind
    /// (closed if it stays so past the grace) or close it at once above the hard limit.
    private func checkBacklog(of connection: Connection) {
        if connection.queue.bytes > connection.compactAbove {
            counters.conflatedFrames += connection.queue.compact()
            connection.compactAbove = max(configuration.queueHighWaterBytes, 2 * connection.queue.bytes)
        }
        let bytes = connection.queue.bytes
        if bytes > configuration.queueHardLimitBytes {
            counters.slowConsumerCloses += 1
            close(connection, code: CloseCode.slowConsumer, reason: "slow consumer")
            return
        }
        if bytes > configuration.queueHighWaterBytes, connection.behindSince == nil {
            connection.behindSince = now
            behindConnections.insert(connection.id)
        }
    }

    /// Closes a connection with `code` and `reason` (at most 123 bytes): its queued frames are
    /// dropped, but for the rest of a message partly written, and the close frame goes out once
    /// that is written.
    public func close(_ connection: ConnectionID, code: UInt16, reason: String) {
        guard let connection = connections[connection] else { return }
        close(connection, code: code, reason: reason)
    }

    func close(_ connection: Connection, code: UInt16, reason: String) {
        guard connection.closing == nil else { return }
        connection.closing = (code, reason)
        closesToReport.append(connection.id)
        connection.refusingInput = true
        connection.inbound = []
        dropWaitingInput(of: connection)
        connection.queue.removeAllButTheMessageInProgress()
        markCaughtUp(connection)
        // Backstop: a peer that never reads never makes us WRITEABLE; drop it
        // after closeTimeout (the peer then sees 1006).
        lws_set_timeout(connection.wsi, PENDING_TIMEOUT_CLOSE_SEND, Int32(configuration.closeTimeout.clampedSeconds))
        requestWritable(connection)
    }

    func requestWritable(_ connection: Connection) {
        guard !connection.writableRequested else {
            // Waiting for its turn to write: an answer owed first, or a close frame, goes now.
            if connection.writeDeferred && (connection.answerFirst || connection.closing != nil) { askToWrite(connection) }
            return
        }
        connection.writableRequested = true
        askToWrite(connection)
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
                close(connection, code: CloseCode.slowConsumer, reason: "slow consumer")
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
        for connection in connections.all where connection.queue.isEmpty && now - connection.lastWrite > .seconds(1) {
            if connection.writeBuffer.capacity > 0 { released += 1 }
            connection.writeBuffer.release()
            connection.queue.releaseStorage()
            connection.compactAbove = 0
        }
        // Freed buffers sit between live allocations: hand their whole pages back to the system.
        if released > 0 { mrd_release_free_memory() }
    }

    /// LWS_CALLBACK_SERVER_WRITEABLE: exactly one `lws_write` per call, of as many whole queued
    /// frames as fit in `writeChunk` (a larger frame alone).
    func writable(wsi: OpaquePointer, user: UnsafeMutableRawPointer?) -> Int32 {
        guard let connection = connection(for: user) else { return 0 }
        connection.writableRequested = false
        if let closing = connection.closing, connection.queue.isEmpty {
            // lws may deliver WRITEABLE again while it awaits the close answer; returning -1
            // then would drop the connection without waiting.
            guard !connection.closeFrameSent else { return 0 }
            connection.closeFrameSent = true
            var reason = closeReasonBytes(closing.reason)
            lws_close_reason(wsi, lws_close_status(rawValue: UInt32(closing.code)), &reason, reason.count)
            return -1
        }
        return writeQueue(of: connection, wsi: wsi)
    }

    /// Writes what `connection` has queued in one `lws_write` (from WRITEABLE, or at the end of
    /// a pass) and asks for WRITEABLE again if more remains: -1 when the socket failed. With a
    /// `ring`, buffered frames join its batch instead, and are finished when it is made.
    func writeQueue(of connection: Connection, wsi: OpaquePointer, batchingIn ring: SendRing? = nil) -> Int32 {
        switch prepareWrite(of: connection) {
        case .nothing:
            return 0
        case .alone:
            return finishWrite(of: connection, written: writeFirstAlone(of: connection, wsi: wsi))
        case let .buffered(payload, count):
            if let ring, count > 0 {
                batch(connection, socket: lws_get_socket_fd(wsi), bytes: payload, count: count, in: ring)
                return 0
            }
            let written = count > 0 ? lws_write(wsi, payload.assumingMemoryBound(to: UInt8.self), count, mrd_lws_write_raw()) : 0
            return finishWrite(of: connection, written: written)
        }
    }

    /// The next write of a connection's queue (frames are pre-built and unmasked: RAW bypasses
    /// lws framing, and no extensions are offered).
    enum PreparedWrite {
        /// Nothing is queued (and the connection is marked caught up, or its close asked for).
        case nothing
        /// A large frame (the fragments of a big welcome), to go out alone from its own bytes:
        /// ``ServerLoop/writeFirstAlone(of:wsi:)``.
        case alone
        /// Smaller frames copied together into the connection's write buffer, `count` bytes
        /// (0 when every frame queued was superseded).
        case buffered(UnsafeMutableRawPointer, count: Int)
    }

    func prepareWrite(of connection: Connection) -> PreparedWrite {
        // Behind (more queued than the conflation threshold): superseded transient frames go.
        let conflating = connection.queue.bytes > configuration.conflateAboveBytes
        guard let firstSize = connection.queue.firstSize(conflating: conflating) else {
            if connection.queue.bytes <= configuration.queueHighWaterBytes { markCaughtUp(connection) }
            if connection.closing != nil { requestWritable(connection) }
            return .nothing
        }
        connection.answerFirst = false
        connection.lastWrite = tickNow
        if firstSize >= Self.directWriteMin { return .alone }
        // The buffer may have been used by the previous write until now: this is the next one.
        connection.writeBuffer.shrink(ifAbove: Self.writeChunk)
        let queued = connection.queue.bytes + connection.queue.exemptBytes
        connection.writeBuffer.reserve(max(firstSize, min(queued, Self.writeChunk)))
        let payload = connection.writeBuffer.payload
        let (used, conflated) = connection.queue.drain(into: payload, capacity: connection.writeBuffer.capacity, conflating: conflating)
        counters.conflatedFrames += conflated
        return .buffered(payload, count: used)
    }

    /// Writes the large frame at the head of the queue: lws copies whatever the socket does not
    /// take at once, so the frame may be released as soon as `lws_write` returns.
    func writeFirstAlone(of connection: Connection, wsi: OpaquePointer) -> Int32 {
        let (written, conflated) = connection.queue.writeFirst { bytes in
            lws_write(wsi, UnsafeMutablePointer(mutating: bytes.baseAddress!.assumingMemoryBound(to: UInt8.self)), bytes.count, mrd_lws_write_raw())
        }
        counters.conflatedFrames += conflated
        return written
    }

    /// After a write (`written` < 0: the socket failed, and so does this, with -1): marks the
    /// connection caught up, and asks for WRITEABLE while more remains.
    func finishWrite(of connection: Connection, written: Int32) -> Int32 {
        if written < 0 { return -1 }
        if connection.queue.bytes <= configuration.queueHighWaterBytes {
            markCaughtUp(connection)
        }
        // A connection being closed writes the rest of its message in progress, then the close.
        if !connection.queue.isEmpty || connection.closing != nil { requestWritable(connection) }
        return 0
    }
}
