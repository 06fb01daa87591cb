import Foundation
import MeridianTransportCore
internal import CLibWebSockets

/// The single C entry point of client contexts; the client is the context's user pointer.
func clientCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons,
    _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?, _ length: Int
) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let owner = lws_context_user(context) else {
        return 0
    }
    let client = Unmanaged<WebSocketClient>.fromOpaque(owner).takeUnretainedValue()
    return client.handleCallback(wsi: wsi, reason: reason, input: input, length: length)
}

extension WebSocketClient {
    func runServiceLoop() {
        guard let context = makeContext() else {
            end(failure: .connectFailed("could not create a client context"))
            return
        }
        var info = lws_client_connect_info()
        info.context = context
        info.address = UnsafePointer(allocations.string(host))
        info.port = Int32(port)
        info.path = UnsafePointer(allocations.string(path))
        info.host = UnsafePointer(allocations.string(tls?.serverName ?? host))
        // No info.origin: lws would send it as "http://" + value. An Origin goes in extraHeaders.
        if let tls {
            var flags = LCCSCF_USE_SSL.rawValue
            if tls.allowSelfSigned { flags |= LCCSCF_ALLOW_SELFSIGNED.rawValue }
            if tls.skipHostnameCheck { flags |= LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK.rawValue }
            info.ssl_connection = Int32(flags)
        }
        info.protocol = subprotocol.map { UnsafePointer(allocations.string($0)) }
        info.local_protocol_name = UnsafePointer(allocations.string(localProtocolName))
        info.ietf_version_or_minus_one = -1
        wsi = lws_client_connect_via_info(&info)
        guard wsi != nil else {
            lws_context_destroy(context)
            end(failure: .connectFailed("could not start connecting to \(host):\(port)"))
            return
        }

        lock.lock()
        wakeableContext = context
        lock.unlock()
        while !exitLoop {
            drainCommands()
            if exitLoop || lws_service(context, 0) < 0 { break }
        }
        lock.lock()
        wakeableContext = nil
        lock.unlock()
        lws_context_destroy(context)
        end(failure: .connectFailed("connection closed during the handshake"))
    }

    private var localProtocolName: String { subprotocol ?? "meridian-client" }

    private func makeContext() -> OpaquePointer? {
        configureLWSLogging()
        let protocols = allocations.zeroed(lws_protocols.self, count: 2)
        protocols[0].name = UnsafePointer(allocations.string(localProtocolName))
        protocols[0].callback = clientCallback
        protocols[0].rx_buffer_size = 16 * 1024
        protocols[0].tx_packet_size = Self.partSize + 64

        var info = lws_context_creation_info()
        info.port = CONTEXT_PORT_NO_LISTEN
        info.protocols = UnsafePointer(protocols)
        info.user = retainedSelf?.toOpaque()
        info.count_threads = 1
        if let tls {
            info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
            info.client_ssl_ca_filepath = tls.caFilePath.map { UnsafePointer(allocations.string($0)) }
        }
        return lws_create_context(&info)
    }

    /// Publishes the end of the connection (a failure if it never opened) and drops the self-retain.
    private func end(failure: TransportError) {
        allocations.freeAll()
        partBuffer.release()
        wsi = nil
        lock.lock()
        if case .connecting = phase { phase = .failed(failure) }
        if closedMessage == nil { closedMessage = .closed(code: nil, reason: "") }
        threadEnded = true
        commands.removeAll()
        lock.broadcast()
        lock.unlock()
        retainedSelf?.release()
        retainedSelf = nil
    }

    private func drainCommands() {
        lock.lock()
        let work = commands
        commands.removeAll(keepingCapacity: true)
        lock.unlock()
        for command in work {
            switch command {
            case .abort:
                exitLoop = true
            case .send(let bytes):
                guard let wsi else { continue }
                outgoing.append(bytes)
                lws_callback_on_writable(wsi)
            case .pauseReading:
                if let wsi { lws_rx_flow_control(wsi, 0) }
            case .resumeReading:
                if let wsi { lws_rx_flow_control(wsi, 1) }
            case .close(let code, let reason):
                guard let wsi else { exitLoop = true; continue }
                if closeRequest == nil { closeRequest = (code, reason) }
                outgoing.removeAll()
                lws_callback_on_writable(wsi)
                // Backstop in case the socket never becomes writable again.
                lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, 5)
            }
        }
    }

    func handleCallback(
        wsi: OpaquePointer, reason: lws_callback_reasons, input: UnsafeMutableRawPointer?, length: Int
    ) -> Int32 {
        switch reason {
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            lock.lock()
            phase = .open
            lock.broadcast()
            lock.unlock()
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            let detail = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "connection error"
            self.wsi = nil
            exitLoop = true
            lock.lock()
            if case .connecting = phase { phase = .failed(.connectFailed(detail)) }
            if closedMessage == nil { closedMessage = .closed(code: nil, reason: "") }
            lock.broadcast()
            lock.unlock()
        case LWS_CALLBACK_CLIENT_RECEIVE:
            if lws_is_first_fragment(wsi) != 0 { inbound.removeAll(keepingCapacity: true) }
            if let input, length > 0 {
                inbound.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
            }
            if lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0 {
                let text = String(decoding: inbound, as: UTF8.self)
                inbound.removeAll(keepingCapacity: true)
                lock.lock()
                inbox.append(.text(text))
                lock.broadcast()
                lock.unlock()
            }
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            peerClose = parseClosePayload(input, length)
        case LWS_CALLBACK_CLIENT_CLOSED:
            self.wsi = nil
            exitLoop = true
            var code = peerClose?.code
            if code == 1005 || code == 1006 { code = nil }
            lock.lock()
            if closedMessage == nil { closedMessage = .closed(code: code, reason: peerClose?.reason ?? "") }
            lock.broadcast()
            lock.unlock()
        case LWS_CALLBACK_CLIENT_WRITEABLE:
            return writable(wsi)
        case LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER:
            return appendHeaders(wsi, input, length)
        default:
            break
        }
        return 0
    }

    /// One `lws_write` of at most `partSize` bytes. lws masks the part in place, so the buffer
    /// is only reused at the next WRITEABLE.
    private func writable(_ wsi: OpaquePointer) -> Int32 {
        if let closeRequest {
            // Once sent, lws awaits the server's answer; -1 again would cut that short.
            guard !closeFrameSent else { return 0 }
            closeFrameSent = true
            var reason = closeReasonBytes(closeRequest.reason)
            lws_close_reason(wsi, lws_close_status(rawValue: UInt32(closeRequest.code)), &reason, reason.count)
            return -1
        }
        guard let message = outgoing.first else { return 0 }
        let part = min(message.count - outgoingOffset, Self.partSize)
        partBuffer.reserve(Self.partSize)
        let payload = partBuffer.payload
        message.withUnsafeBytes { source in
            if part > 0 { payload.copyMemory(from: source.baseAddress! + outgoingOffset, byteCount: part) }
        }
        let isStart = outgoingOffset == 0
        let isEnd = outgoingOffset + part == message.count
        let flags = lws_write_ws_flags(Int32(LWS_WRITE_TEXT.rawValue), isStart ? 1 : 0, isEnd ? 1 : 0)
        let written = lws_write(
            wsi, payload.assumingMemoryBound(to: UInt8.self), part, lws_write_protocol(rawValue: UInt32(flags)))
        if written < 0 { return -1 }
        if isEnd {
            outgoing.removeFirst()
            outgoingOffset = 0
        } else {
            outgoingOffset += part
        }
        if !outgoing.isEmpty { lws_callback_on_writable(wsi) }
        return 0
    }
}

extension WebSocketClient {
    /// Adds ``extraHeaders`` to the upgrade request. `input` points at the write cursor
    /// (`char **`), `length` is the room left.
    func appendHeaders(_ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        guard !extraHeaders.isEmpty, let input else { return 0 }
        let cursor = input.assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
        guard let start = cursor.pointee else { return 0 }
        let end = start + length
        for (name, value) in extraHeaders {
            let token = Array((name.hasSuffix(":") ? name : name + ":").utf8) + [0]
            let bytes = Array(value.utf8)
            if lws_add_http_header_by_name(wsi, token, bytes, Int32(bytes.count), cursor, end) != 0 { return -1 }
        }
        return 0
    }
}
