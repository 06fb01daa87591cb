internal import CLibWebSockets
internal import MeridianProtocol
import Glibc

/// The single C entry point for the three protocols. Recovers the server from the context's user
/// pointer (retained by `start()` until after `lws_context_destroy`).
func serverCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons,
    _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?, _ length: Int
) -> Int32 {
    // OpenSSL's verdict on a client certificate (with tlsClientCAPath), before any wsi exists:
    // `length` is its preverify_ok; 0 accepts, 1 refuses the handshake.
    if reason == LWS_CALLBACK_OPENSSL_PERFORM_CLIENT_CERT_VERIFICATION { return length == 1 ? 0 : 1 }
    guard let wsi, let context = lws_get_context(wsi), let owner = lws_context_user(context) else {
        return 0
    }
    let server = Unmanaged<ServerLoop>.fromOpaque(owner).takeUnretainedValue()
    return server.handleCallback(wsi: wsi, reason: reason, user: user, input: input, length: length)
}

extension ServerLoop {
    func handleCallback(
        wsi: OpaquePointer, reason: lws_callback_reasons,
        user: UnsafeMutableRawPointer?, input: UnsafeMutableRawPointer?, length: Int
    ) -> Int32 {
        switch reason {
        case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
            // Delivered once per protocol with a fake wsi; the queue is drained after lws_service.
            return 0
        case LWS_CALLBACK_FILTER_NETWORK_CONNECTION:
            if draining { return 1 }
            // `wsi` is the listener's: lws accepts every pending connection in one go unless
            // told to stop (ServerLoop+Input.swift).
            acceptedOne(listener: wsi)
            // The accepted socket's descriptor; lws closes it when this answers non-zero.
            let descriptor = Int32(truncatingIfNeeded: Int(bitPattern: input))
            return configuration.handOff?(descriptor) == true ? 1 : 0
        case LWS_CALLBACK_SERVER_NEW_CLIENT_INSTANTIATED:
            boundSendBuffer(of: wsi)
            holdHandshake(wsi)
            return 0
        case LWS_CALLBACK_HTTP_CONFIRM_UPGRADE:
            return confirmUpgrade(wsi: wsi, to: input)
        case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
            return filterUpgrade(wsi: wsi)
        case LWS_CALLBACK_WSI_DESTROY:
            if gatesHandshakes { handshakeGate.forget(wsi) }
            releaseAdmission(wsi: wsi)
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        case LWS_CALLBACK_ESTABLISHED:
            opened(wsi: wsi, user: user)
            return 0
        case LWS_CALLBACK_RECEIVE:
            received(wsi: wsi, user: user, input: input, length: length)
            return 0
        case LWS_CALLBACK_RECEIVE_PONG:
            connection(for: user)?.lastHeard = tickNow
            return 0
        case LWS_CALLBACK_SERVER_WRITEABLE:
            return writable(wsi: wsi, user: user)
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            return peerInitiatedClose(wsi: wsi, user: user, input: input, length: length)
        case LWS_CALLBACK_CLOSED:
            readiness.forget(lws_get_socket_fd(wsi))
            closed(user: user)
            releaseAdmission(wsi: wsi)
            return 0
        case LWS_CALLBACK_HTTP:
            return httpRequest(wsi: wsi, user: user, input: input, length: length)
        case LWS_CALLBACK_HTTP_WRITEABLE:
            return httpWritable(wsi: wsi, user: user)
        case LWS_CALLBACK_HTTP_BODY:
            return httpBody(user: user, input: input, length: length)
        case LWS_CALLBACK_HTTP_BODY_COMPLETION:
            return httpBodyComplete(wsi: wsi, user: user)
        case LWS_CALLBACK_RAW_ADOPT:
            return rawAdopted(wsi: wsi, user: user)
        case LWS_CALLBACK_RAW_RX:
            return rawReceived(user: user, input: input, length: length)
        case LWS_CALLBACK_RAW_WRITEABLE:
            return rawWritable(wsi: wsi, user: user)
        case LWS_CALLBACK_RAW_CLOSE:
            rawClosed(user: user)
            return 0
        case LWS_CALLBACK_CLOSED_HTTP, LWS_CALLBACK_HTTP_DROP_PROTOCOL:
            if let id = user?.load(as: UInt64.self), id != 0 {
                httpExchanges[id] = nil
                httpBodies[id] = nil
                user?.storeBytes(of: 0, as: UInt64.self)
                endDrainIfDone()
            }
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        default:
            return lws_callback_http_dummy(wsi, reason, user, input, length)
        }
    }

    /// The connection whose id is stored in lws's per-session memory, if any.
    func connection(for user: UnsafeMutableRawPointer?) -> Connection? {
        guard let id = storedID(in: user) else { return nil }
        return connections[id]
    }

    /// The connection id stored in lws's per-session memory (its raw value; 0 there: none).
    private func storedID(in user: UnsafeMutableRawPointer?) -> ConnectionID? {
        guard let raw = user?.load(as: UInt64.self), raw != 0 else { return nil }
        return ConnectionID(rawValue: raw)
    }

    private func opened(wsi: OpaquePointer, user: UnsafeMutableRawPointer?) {
        guard let user else { return }
        let connection = connections.insert { Connection(id: $0, wsi: wsi, headroom: headroom) }
        user.storeBytes(of: connection.id.rawValue, as: UInt64.self)
        readiness.watch(lws_get_socket_fd(wsi))
        connection.lastHeard = tickNow
        let handshake = admitted[wsi]?.handshake ?? readHandshake(wsi)
        handler?.transport(self, didOpen: connection.id, handshake: handshake)
        if draining { close(connection, code: CloseCode.goingAway, reason: "server shutting down") }
    }

    /// A part of a message. A message that arrives whole (the usual case) is accepted straight
    /// from lws's buffer; one in several parts is put together in the connection's reassembly
    /// buffer, which is kept for the next one. Accepted messages go to the handler at once, or
    /// wait for their connection's turn when the loop is behind (ServerLoop+Input.swift).
    private func received(
        wsi: OpaquePointer, user: UnsafeMutableRawPointer?, input: UnsafeMutableRawPointer?, length: Int
    ) {
        guard let connection = connection(for: user), !connection.refusingInput else { return }
        connection.lastHeard = tickNow
        if lws_frame_is_binary(wsi) != 0 {
            close(connection, code: CloseCode.unsupportedData, reason: "text frames only")
            return
        }
        guard inboundConforms(connection, wsi: wsi, input: input, length: length) else { return }
        let first = lws_is_first_fragment(wsi) != 0
        let complete = lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0
        if first { connection.assembling = false }
        let buffered = connection.assembling ? connection.inbound.count : 0
        // lws enforces no size limit: count here and stop buffering once past it. Further input
        // is ignored (refusingInput); lws reads and drops it until the peer answers our close.
        guard buffered + length <= configuration.maxMessageBytes else {
            close(connection, code: CloseCode.messageTooBig, reason: "message too big")
            return
        }
        let part = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
        if complete && !connection.assembling {
            accept(part, from: connection)
            return
        }
        if !connection.assembling {
            connection.inbound.removeAll(keepingCapacity: true)
            connection.assembling = true
        }
        connection.inbound.append(contentsOf: part)
        guard complete else { return }
        connection.assembling = false
        // A copy of the reference: the handler may close the connection, which drops the buffer.
        let message = connection.inbound
        message.withUnsafeBytes { accept($0, from: connection) }
        // A large message's buffer is not kept: an idle connection should cost little.
        if connection.inbound.capacity > 16 * 1024 { connection.inbound = [] }
    }

    /// Hands a whole message to the handler.
    func deliver(_ message: UnsafeRawBufferPointer, from connection: Connection) {
        counters.messagesReceived += 1
        counters.bytesReceived += message.count
        handler?.transport(self, didReceive: message, from: connection.id)
    }

    private func closed(user: UnsafeMutableRawPointer?) {
        guard let id = storedID(in: user) else { return }
        user?.storeBytes(of: 0, as: UInt64.self)
        guard let connection = connections.remove(id) else { return }
        behindConnections.remove(id)
        handWaitingBeforeClose(connection)
        if !connection.reported {
            let code = connection.closing?.code ?? connection.peerClose?.code
            let reason = connection.closing?.reason ?? connection.peerClose?.reason ?? ""
            handler?.transport(self, didClose: id, code: code, reason: reason)
        }
        endDrainIfDone()
    }
}

extension ServerLoop {
    /// Tells the handler about connections the server is closing, without
    /// waiting for lws to finish: a slow consumer may hold its close frame
    /// back for the whole close timeout, and the session should not wait for
    /// it. Done at a tick, outside any handler call, so the events the handler
    /// emits cannot interleave with a broadcast in progress.
    func reportServerCloses() {
        guard !closesToReport.isEmpty else { return }
        let ids = closesToReport
        closesToReport.removeAll()
        for id in ids {
            guard let connection = connections[id], !connection.reported, let closing = connection.closing else { continue }
            connection.reported = true
            handler?.transport(self, didClose: id, code: closing.code, reason: closing.reason)
        }
    }
}

extension ServerLoop {
    /// A new connection's socket send buffer, bounded where ``TransportConfiguration/socketSendBuffer``
    /// says so.
    func boundSendBuffer(of wsi: OpaquePointer) {
        guard let bytes = configuration.socketSendBuffer else { return }
        var size = Int32(clamping: bytes)
        setsockopt(lws_get_socket_fd(wsi), SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
    }
}
