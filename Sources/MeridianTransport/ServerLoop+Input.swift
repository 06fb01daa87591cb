import MeridianTransportCore
internal import CLibWebSockets

/// What the loop knows of the work it spreads over passes of the event loop.
struct InputState {
    var scheduler: InputScheduler
    /// True while messages go to their connection's inbox instead of straight to the handler:
    /// from the moment a pass has spent ``TransportConfiguration/inputSlice`` on them until
    /// every inbox is empty again.
    var queueing = false
    /// When the current pass handed its first message to the handler (nil: none yet).
    var passBegan: Duration?
    /// Passes of the event loop so far.
    var pass: UInt64 = 0
    /// True once an answer owed first was asked of lws since the last pass: the next pass,
    /// which writes it, comes before any more busy work.
    var answerWaiting = false
    /// Writes lws may still be asked for in this pass (the rest wait their turn).
    var writeAllowance: WriteAllowance
    /// Writes a broadcast may still make at once in this pass (``TransportConfiguration/directWritesPerPass``).
    var directWrites = 0
    /// How loaded the loop is, for ``directWrites``.
    var gauge: LoadGauge
    /// Connections a broadcast found idle in this pass, written at its end (`writableRequested` set).
    var flushes: [ConnectionID] = []
    /// When this pass's end-of-pass writes must stop (``TransportConfiguration/writeSlice``):
    /// set by its first write, cleared when the pass ends.
    var writesEnd: Duration?
    /// Connections whose write waits for its turn, oldest first: not busy, and busy.
    var writeWaiters = IDQueue()
    var busyWriteWaiters = IDQueue()
    /// Connections that sent as busy ones in this pass (ServerLoop+Input.swift, reading).
    var busyThisPass: [ConnectionID] = []
    /// Busy connections not read until their turn comes, oldest first.
    var readWaiters = IDQueue()
    /// Connections accepted in this pass, and the listener when it was told to stop accepting.
    var accepts = 0
    var pausedListener: OpaquePointer?
    /// WebSocket upgrades served in this pass.
    var upgrades = 0
}

/// The writes lws may still be asked for in a pass of the loop: to connections that are not
/// busy, and to busy ones.
struct WriteAllowance {
    var writes: Int
    var busyWrites: Int

    init(_ configuration: TransportConfiguration) {
        writes = configuration.writesPerPass
        busyWrites = configuration.busyWritesPerPass
    }

    func remains(busy: Bool) -> Bool { (busy ? busyWrites : writes) > 0 }

    /// Takes one write of the allowance for a busy connection or another; false when it is spent.
    mutating func take(busy: Bool) -> Bool {
        guard remains(busy: busy) else { return false }
        if busy { busyWrites -= 1 } else { writes -= 1 }
        return true
    }
}

extension InputState {
    /// The oldest connection waiting for its turn to write (busy, or not), removed from its queue.
    mutating func nextWriteWaiter(busy: Bool) -> ConnectionID? {
        busy ? busyWriteWaiters.popFirst() : writeWaiters.popFirst()
    }

    mutating func waitToWrite(_ id: ConnectionID, busy: Bool) {
        if busy { busyWriteWaiters.append(id) } else { writeWaiters.append(id) }
    }
}

/// Fairness between connections, so that nothing one client sends holds up the others.
///
/// lws reads every readable connection in a pass (up to 2 KiB each), calls WRITEABLE for every
/// connection with something to write and accepts every waiting connection, and the server
/// used to handle all of it there and then: with a thousand connections flooding one session,
/// a pass was tens of thousands of requests, and a quiet member's `ping` waited for the whole
/// of it, then for the writes of the next pass. Now each is bounded per pass:
///
/// - **Handling.** A pass hands messages to the handler for at most
///   ``TransportConfiguration/inputSlice``; the rest wait in their connection's inbox and are
///   served between passes by the ``InputScheduler``, a slice at a time, sparse connections
///   first. Messages of one connection are always handled in the order they came.
/// - **Reading.** A *busy* connection (one that sent more than
///   ``TransportConfiguration/sparsePerPass`` messages in a pass, or more than
///   ``TransportConfiguration/sparseRate`` a second) is read in one pass, then not
///   (`lws_rx_flow_control`) until its inbox is empty and its turn comes:
///   ``TransportConfiguration/busyReadsPerPass`` such connections are read again per pass.
///   What a flood sends meanwhile waits in the kernel, then in the client.
/// - **Writing.** lws is asked for at most ``TransportConfiguration/writesPerPass`` writes per
///   pass (each a WRITEABLE callback and a `send`), and ``TransportConfiguration/busyWritesPerPass``
///   to busy connections; further ones wait their turn, oldest first, and gather what is queued
///   for them meanwhile: a loaded server writes several frames per `send`, not one. Answers to
///   sparse requests and close frames never wait. A broadcast to a session of a thousand
///   flooders is written to them over several passes, with a member's `ping` answered in
///   between.
/// - **Accepting.** lws accepts every connection waiting on the listening socket in one go;
///   after ``TransportConfiguration/acceptsPerPass`` the listener is not read until the next
///   pass (`lws_rx_flow_control` on it), so a connection flood is accepted a share at a time:
///   the rest waits in the kernel's accept queue.
/// - **Handshakes.** A new connection is not read until its first bytes have come and its turn
///   with them (``HandshakeGate``): ``TransportConfiguration/handshakesPerPass`` a pass. A burst
///   of requests from connections accepted over earlier passes is served a share a pass too.
///
/// A sparse connection (a member sending a request at a time, a few a second) is never kept
/// from reading, is served first, and its answers are written at once.
extension ServerLoop {
    /// A whole message from `connection` (LWS_CALLBACK_RECEIVE): handled at once while the
    /// loop keeps up, else queued for the connection's turn.
    func accept(_ message: UnsafeRawBufferPointer, from connection: Connection) {
        let sparse = spendSparseCredit(connection)
        if !sparse && !connection.busy {
            connection.busy = true
            input.busyThisPass.append(connection.id)
        }
        // Handled now while the loop keeps up, and a sparse connection's message even when it
        // does not (it would be served first anyway): its answer goes out in the next pass.
        if connection.inbox.isEmpty && (!input.queueing || sparse) {
            let began = input.passBegan ?? now
            input.passBegan = began
            if sparse { connection.answerFirst = true }
            deliver(message, from: connection)
            if now - began >= configuration.inputSlice { input.queueing = true }
            return
        }
        connection.inbox.append(message)
        counters.messagesWaited += 1
        if !input.scheduler.isWaiting(connection.id) {
            input.scheduler.arrived(connection.id, sparse: sparse)
        }
        if !connection.throttled && connection.inbox.bytes >= configuration.inboxHighWaterBytes {
            // lws keeps what it read and did not hand over yet in its own buffer.
            throttle(connection)
        }
    }

    /// After each pass of the event loop: serves waiting messages, keeps the busy connections
    /// read in this pass from reading again until their turn, lets the next ones read, and asks
    /// for the writes put off; makes the next pass return at once while any of it waits.
    func afterPass() {
        input.pass &+= 1
        serveWaitingInput()
        flushAtPassEnd()
        for id in input.busyThisPass {
            guard let connection = connections[id] else { continue }
            connection.busy = false
            guard !connection.refusingInput else { continue }
            if !connection.throttled { throttle(connection) }
            if connection.inbox.isEmpty { waitToRead(connection) }
        }
        input.busyThisPass.removeAll(keepingCapacity: true)
        var reads = 0
        while reads < configuration.busyReadsPerPass, let id = input.readWaiters.first {
            input.readWaiters.removeFirst()
            guard let connection = connections[id], connection.waitingToRead else { continue }
            connection.waitingToRead = false
            guard connection.throttled, !connection.refusingInput else { continue }
            connection.throttled = false
            lws_rx_flow_control(connection.wsi, 1)
            reads += 1
        }
        input.writeAllowance = WriteAllowance(configuration)
        input.directWrites = directWritesAllowed()
        askForWaitingWrites(busy: false)
        askForWaitingWrites(busy: true)
        flushAtPassEnd()
        input.accepts = 0
        if let listener = input.pausedListener {
            input.pausedListener = nil
            lws_rx_flow_control(listener, 1)
        }
        input.upgrades = 0
        releaseHandshakes()
        input.passBegan = nil
        input.writesEnd = nil
        input.answerWaiting = false
        // The next pass must not sleep in the event loop while work waits.
        if !input.scheduler.isEmpty || !input.readWaiters.isEmpty || !input.writeWaiters.isEmpty
            || !input.busyWriteWaiters.isEmpty || !input.flushes.isEmpty {
            dontSleepNextPass()
        }
    }

    /// The writes a broadcast may make at the end of the next pass: while the loop is light
    /// (``LoadGauge``), ``TransportConfiguration/directWritesPerPass``; under load, writes wait
    /// for WRITEABLE and each gathers more frames.
    private func directWritesAllowed() -> Int {
        guard !configuration.usesTLS, configuration.directWritesPerPass > 0 else { return 0 }
        return input.gauge.update(now: now, deliveries: counters.deliveries) ? configuration.directWritesPerPass : 0
    }

    /// Serves waiting messages for up to ``TransportConfiguration/inputSlice``, returning early
    /// once it served sparse connections, so that their answers go out in the next pass.
    func serveWaitingInput() {
        guard !input.scheduler.isEmpty else {
            input.queueing = false
            return
        }
        let began = now
        var servedSparse = input.answerWaiting
        while let (id, sparse) = input.scheduler.next() {
            if servedSparse && !sparse { break }
            guard let connection = connections[id], !connection.refusingInput, !connection.inbox.isEmpty else {
                input.scheduler.remove(id)
                continue
            }
            if sparse { connection.answerFirst = true }
            let size = handFirstWaiting(of: connection)
            let more = !connection.inbox.isEmpty
            input.scheduler.served(id, cost: InputScheduler.cost(ofMessageBytes: size), more: more)
            servedSparse = servedSparse || sparse
            if connection.refusingInput { continue }
            if more {
                if sparse && connection.sparseCredit < 1 { input.scheduler.demote(id) }
            } else if connection.throttled {
                waitToRead(connection)
            }
            if now - began >= configuration.inputSlice { break }
        }
        input.queueing = !input.scheduler.isEmpty
    }

    /// Asks lws for a WRITEABLE callback of `connection` (which has something to write and was
    /// not asked for yet): at once when it owes a prompt answer or is closing, or within the
    /// pass's allowance of writes (the busy connections' one when it is read in turns); else it
    /// waits its turn.
    func askToWrite(_ connection: Connection) {
        if connection.answerFirst || connection.closing != nil {
            connection.writeDeferred = false
            input.answerWaiting = input.answerWaiting || connection.answerFirst
            lws_callback_on_writable(connection.wsi)
        } else if input.writeAllowance.take(busy: connection.throttled) {
            grantWrite(connection)
        } else {
            waitToWrite(connection.id, busy: connection.throttled)
            connection.writeDeferred = true
        }
    }

    /// `id` (its `writableRequested` set) waits for its turn to write.
    func waitToWrite(_ id: ConnectionID, busy: Bool) {
        input.waitToWrite(id, busy: busy)
        counters.deferredWrites += 1
    }

    /// Asks for the writes waiting their turn (of busy connections, or of the others), oldest
    /// first, while the pass's allowance lasts.
    private func askForWaitingWrites(busy: Bool) {
        while input.writeAllowance.remains(busy: busy), let id = input.nextWriteWaiter(busy: busy) {
            guard let connection = connections[id], connection.writeDeferred else { continue }
            connection.writeDeferred = false
            _ = input.writeAllowance.take(busy: busy)
            grantWrite(connection)
        }
    }

    /// Hands the oldest waiting message of `connection` to the handler and removes it from the
    /// inbox (unless the handler closed the connection, which emptied it); returns its size.
    @discardableResult
    func handFirstWaiting(of connection: Connection) -> Int {
        let size = connection.inbox.firstSize
        inputScratch.removeAll(keepingCapacity: true)
        connection.inbox.withFirst { inputScratch.append(contentsOf: $0) }
        connection.inbox.removeFirst()
        inputScratch.withUnsafeBytes { deliver($0, from: connection) }
        if inputScratch.capacity > 64 * 1024 { inputScratch = [] }
        return size
    }

    /// The connection is gone (LWS_CALLBACK_CLOSED): what it sent before it closed is handled
    /// now, in order, unless the server had refused its input.
    func handWaitingBeforeClose(_ connection: Connection) {
        input.scheduler.remove(connection.id)
        while !connection.refusingInput && !connection.inbox.isEmpty {
            handFirstWaiting(of: connection)
        }
        connection.inbox.removeAll()
    }

    /// The server closes `connection`: its waiting messages are dropped with the rest of its
    /// input, and lws reads it again (to see the answer to the close frame).
    func dropWaitingInput(of connection: Connection) {
        connection.inbox.removeAll()
        input.scheduler.remove(connection.id)
        connection.waitingToRead = false
        if connection.throttled {
            connection.throttled = false
            lws_rx_flow_control(connection.wsi, 1)
        }
    }

    /// LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED: the new connection is not read until its
    /// first bytes have come and its turn with them.
    func holdHandshake(_ wsi: OpaquePointer) {
        guard gatesHandshakes, handshakeGate.hold(wsi, socket: lws_get_socket_fd(wsi)) else { return }
        lws_rx_flow_control(wsi, 0)
        counters.heldHandshakes += 1
    }

    /// After a pass: the held connections whose first bytes came are read from the next pass on,
    /// ``TransportConfiguration/handshakesPerPass`` of them at most.
    private func releaseHandshakes() {
        guard gatesHandshakes, !handshakeGate.isEmpty else { return }
        for wsi in handshakeGate.takeReady(limit: configuration.handshakesPerPass) where !answerBeforeLWS(wsi) {
            lws_rx_flow_control(wsi, 1)
        }
    }

    /// The listener accepted a connection (LWS_CALLBACK_FILTER_NETWORK_CONNECTION): past the
    /// pass's share, it stops accepting until the next pass.
    func acceptedOne(listener: OpaquePointer) {
        input.accepts += 1
        guard input.accepts >= configuration.acceptsPerPass, input.pausedListener == nil else { return }
        input.pausedListener = listener
        counters.pausedAccepts += 1
        lws_rx_flow_control(listener, 0)
    }

    private func throttle(_ connection: Connection) {
        connection.throttled = true
        counters.inputThrottles += 1
        lws_rx_flow_control(connection.wsi, 0)
    }

    /// A throttled connection with nothing waiting: it reads again in its turn.
    private func waitToRead(_ connection: Connection) {
        guard !connection.waitingToRead else { return }
        connection.waitingToRead = true
        input.readWaiters.append(connection.id)
    }

    /// Whether this message of `connection` is a sparse one: among the first
    /// ``TransportConfiguration/sparsePerPass`` it sent in this pass, and within its credit
    /// (refilled at ``TransportConfiguration/sparseRate`` up to
    /// ``TransportConfiguration/sparseBurst``), which it takes. A connection read in turns is
    /// read seldom, and earns credit meanwhile: the count per pass keeps a flood's read (many
    /// messages at once) busy all the same.
    private func spendSparseCredit(_ connection: Connection) -> Bool {
        if connection.readPass != input.pass {
            connection.readPass = input.pass
            connection.messagesThisPass = 0
        }
        connection.messagesThisPass += 1
        guard connection.messagesThisPass <= configuration.sparsePerPass else { return false }
        let t = now
        let elapsed = t - connection.sparseCreditAt
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        connection.sparseCredit = min(configuration.sparseBurst, connection.sparseCredit + seconds * configuration.sparseRate)
        connection.sparseCreditAt = t
        guard connection.sparseCredit >= 1 else { return false }
        connection.sparseCredit -= 1
        return true
    }
}
