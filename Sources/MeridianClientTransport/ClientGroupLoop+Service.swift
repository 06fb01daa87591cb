import Foundation
import MeridianTransportCore
internal import CLibWebSockets

/// The C entry point of client-group contexts; the loop is the context's user pointer and
/// each wsi's opaque user data is its integer id plus one (never a reference).
func clientGroupCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons,
    _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?, _ length: Int
) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let owner = lws_context_user(context) else { return 0 }
    let loop = Unmanaged<ClientGroupLoop>.fromOpaque(owner).takeUnretainedValue()
    guard let tag = lws_get_opaque_user_data(wsi) else { return 0 }
    return loop.handle(wsi: wsi, id: Int(bitPattern: tag) - 1, reason: reason, input: input, length: length)
}

extension ClientGroupLoop: ServiceLoop {
    /// Runs first on the service thread: creates the context (no connections yet).
    func startService() throws(TransportError) -> ServiceStart<ClientGroupLoop, Void> {
        configureLWSLogging()
        let names = (
            host: allocations.string(configuration.host), raw: allocations.string("RAW"),
            protocolName: allocations.string(configuration.subprotocol), path: allocations.string(configuration.path),
            serverName: configuration.tls?.serverName.map { allocations.string($0) })
        cStrings = names
        sourceCStrings = configuration.sourceAddresses.map { allocations.string($0) }
        let protocols = allocations.zeroed(lws_protocols.self, count: 2)
        protocols[0].name = UnsafePointer(names.protocolName)
        protocols[0].callback = clientGroupCallback
        protocols[0].rx_buffer_size = 64 * 1024
        protocols[0].tx_packet_size = 64 * 1024
        var info = lws_context_creation_info()
        info.port = CONTEXT_PORT_NO_LISTEN
        info.protocols = UnsafePointer(protocols)
        // Valid while the context lives: the service thread holds the loop until then.
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.count_threads = 1
        // Raw sockets read into this buffer: large reads carry many frames each.
        info.pt_serv_buf_size = UInt32(Self.readBufferSize)
        if let tls = configuration.tls {
            info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
            info.client_ssl_ca_filepath = tls.caFilePath.map { UnsafePointer(allocations.string($0)) }
            info.client_ssl_cert_filepath = tls.certificateFilePath.map { UnsafePointer(allocations.string($0)) }
            info.client_ssl_private_key_filepath = tls.privateKeyFilePath.map { UnsafePointer(allocations.string($0)) }
        }
        let eventLoop = configuration.eventLoop == .libev ? mrd_ev_loop_new() : nil
        if let eventLoop {
            let loops = allocations.zeroed(UnsafeMutableRawPointer?.self, count: 1)
            loops[0] = eventLoop
            info.foreign_loops = loops
            info.options |= UInt64(LWS_SERVER_OPTION_LIBEV)
            info.signal_cb = mrd_ignore_signal
        }
        guard let context = lws_create_context(&info) else {
            if let eventLoop { mrd_ev_loop_destroy(eventLoop) }
            cStrings = nil
            sourceCStrings = []
            allocations.freeAll()
            throw .connectFailed("could not create a client context")
        }
        self.context = context
        libevLoop = eventLoop
        return ServiceStart(loop: self, context: context, tickInterval: max(configuration.tickInterval, .microseconds(100)))
    }

    package func serviceTick() {
        handler?.groupTick(self)
    }

    package static var timesServicePasses: Bool { true }

    /// Polls at most once per `coalescing`: every poll walks every socket, so under load fewer,
    /// fuller wake-ups cost far less per message. A message still arriving (a large snapshot)
    /// is read on at once, not a poll at a time.
    package func servicePassEnded(began: ContinuousClock.Instant) {
        let rest = messageInFlight ? .zero : configuration.coalescing - (ContinuousClock.now - began)
        messageInFlight = false
        if rest > .zero { usleep(UInt32(clamping: rest.microseconds)) }
    }

    /// The handler's last call; it hears nothing of the connections the context's destruction
    /// closes, and is released here, on its own thread.
    package func serviceWillDestroyContext() {
        handler?.groupWillEnd(self)
        handler = nil
    }

    package func serviceDidDestroyContext() {
        if let libevLoop { mrd_ev_loop_destroy(libevLoop) }
        libevLoop = nil
        context = nil
        cStrings = nil
        sourceCStrings = []
        for key in links.keys { links[key]?.buffer.release() }
        links.removeAll()
        allocations.freeAll()
    }

    /// Starts connecting `id`. The outcome arrives as didOpen or didClose.
    /// The connection is a raw lws socket: the upgrade and the framing are ``FrameReader``'s and ``FrameWriter``'s.
    public func connect(_ id: Int) {
        guard let context, let names = cStrings, !links.keys.contains(id) else { return }
        var info = lws_client_connect_info()
        info.context = context
        info.address = UnsafePointer(names.host)
        info.port = Int32(configuration.ports.isEmpty ? configuration.port : configuration.ports[id % configuration.ports.count])
        info.host = info.address
        if let tls = configuration.tls {
            // lws 4.1 starts TLS on a RAW client before its socket is connected (SSL_connect
            // fails, EBADF): over TLS the connection takes the ws role, lws doing the upgrade
            // and the framing (ClientGroupLoop+TLS.swift).
            var flags = LCCSCF_USE_SSL.rawValue
            if tls.allowSelfSigned { flags |= LCCSCF_ALLOW_SELFSIGNED.rawValue }
            if tls.skipHostnameCheck { flags |= LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK.rawValue }
            info.ssl_connection = Int32(flags)
            if let name = names.serverName { info.host = UnsafePointer(name) }
            info.path = UnsafePointer(names.path)
            info.protocol = UnsafePointer(names.protocolName)
            info.ietf_version_or_minus_one = -1
        } else {
            info.method = UnsafePointer(names.raw)
        }
        info.local_protocol_name = UnsafePointer(names.protocolName)
        if !sourceCStrings.isEmpty { info.iface = UnsafePointer(sourceCStrings[id % sourceCStrings.count]) }
        info.opaque_user_data = UnsafeMutableRawPointer(bitPattern: id + 1)
        links[id] = Link(reader: FrameReader(keptPrefix: configuration.keptMessagePrefix))
        if let wsi = lws_client_connect_via_info(&info) {
            if links.keys.contains(id) { links[id]?.wsi = wsi }
        } else if links.removeValue(forKey: id) != nil {
            handler?.group(self, didClose: id, code: nil, failed: true)
        }
    }

    /// Queues one text message for `id`.
    public func send(_ bytes: [UInt8], to id: Int) {
        guard let wsi = links[id]?.wsi, links[id]?.opened == true, links[id]?.closing == false else { return }
        if configuration.tls != nil {
            links[id]!.messages.append(bytes)
            lws_callback_on_writable(wsi)
            return
        }
        bytes.withUnsafeBytes { FrameWriter.append(opcode: FrameWriter.text, payload: $0, mask: nextMask(), to: &links[id]!.outgoing) }
        lws_callback_on_writable(wsi)
    }

    /// Closes `id` with a close frame carrying `code`.
    public func close(_ id: Int, code: UInt16 = 1000) {
        guard let wsi = links[id]?.wsi, links[id]?.closing == false else { return }
        links[id]!.outgoing.removeAll()
        links[id]!.messages.removeAll()
        if configuration.tls != nil {
            links[id]!.closing = true
            links[id]!.closeCode = code
            lws_callback_on_writable(wsi)
            lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, 5)
            return
        }
        queueClose(id, code: code)
        lws_callback_on_writable(wsi)
        // The server answers with its own close frame; do not wait for it for ever.
        lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, 5)
    }

    private func queueClose(_ id: Int, code: UInt16) {
        links[id]!.closing = true
        [UInt8(code >> 8), UInt8(code & 0xFF)].withUnsafeBytes {
            FrameWriter.append(opcode: FrameWriter.close, payload: $0, mask: nextMask(), to: &links[id]!.outgoing)
        }
    }

    /// A masking key (RFC 6455 §5.3: unpredictable to scripts; a fast generator serves a load tool).
    private func nextMask() -> UInt32 {
        maskState ^= maskState << 13
        maskState ^= maskState >> 7
        maskState ^= maskState << 17
        return UInt32(truncatingIfNeeded: maskState)
    }

    func handle(wsi: OpaquePointer, id: Int, reason: lws_callback_reasons, input: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        switch reason {
        case LWS_CALLBACK_RAW_CONNECTED:
            guard links.keys.contains(id) else { return -1 }
            links[id]!.wsi = wsi
            let key = (0..<16).map { _ in UInt8.random(in: 0...255) }
            links[id]!.outgoing = FrameWriter.upgradeRequest(
                host: configuration.host, port: configuration.port, path: configuration.path,
                subprotocol: configuration.subprotocol, key: key)
            lws_callback_on_writable(wsi)
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            if let link = links.removeValue(forKey: id) {
                link.buffer.release()
                handler?.group(self, didClose: id, code: nil, failed: true)
            }
        case LWS_CALLBACK_RAW_RX:
            guard links.keys.contains(id), let input, length > 0 else { return 0 }
            return received(UnsafeRawBufferPointer(start: input, count: length), wsi: wsi, id: id)
        case LWS_CALLBACK_RAW_CLOSE:
            if let link = links.removeValue(forKey: id) {
                link.buffer.release()
                handler?.group(self, didClose: id, code: link.peerClose, failed: !link.opened)
            }
        case LWS_CALLBACK_RAW_WRITEABLE:
            return writable(wsi, id)
        case LWS_CALLBACK_CLIENT_ESTABLISHED, LWS_CALLBACK_CLIENT_RECEIVE, LWS_CALLBACK_CLIENT_WRITEABLE,
             LWS_CALLBACK_WS_PEER_INITIATED_CLOSE, LWS_CALLBACK_CLIENT_CLOSED:
            return handleWebSocketRole(wsi: wsi, id: id, reason: reason, input: input, length: length)
        default:
            break
        }
        return 0
    }

    /// Bytes from the server: the upgrade answer, then frames.
    private func received(_ chunk: UnsafeRawBufferPointer, wsi: OpaquePointer, id: Int) -> Int32 {
        guard let link = links[id] else { return -1 }
        // Not used while the chunk is read: events may send or close.
        var reader = FrameReader()
        swap(&reader, &link.reader)
        let handler = self.handler
        handler?.group(self, willRead: id)
        var failed = false
        let ok = reader.feed(chunk, subprotocol: configuration.subprotocol) { frame in
            switch frame {
            case .upgraded:
                link.opened = true
                handler?.group(self, didOpen: id)
            case .text(let message):
                handler?.group(self, didReceive: message, from: id)
            case .ping(let payload):
                guard !link.closing else { return }
                FrameWriter.append(opcode: FrameWriter.pong, payload: payload, mask: nextMask(), to: &link.outgoing)
                lws_callback_on_writable(wsi)
            case .close(let code):
                guard links[id] === link else { return }
                link.peerClose = code
                if !link.closing { queueClose(id, code: code ?? 1000) }
                link.closeAfterWrite = true
                lws_callback_on_writable(wsi)
            case .failure:
                failed = true
            }
        }
        // The handler may have ended the connection (or a new one taken its id) meanwhile.
        guard links[id] === link else { return -1 }
        if reader.midFrame { messageInFlight = true }
        link.reader = reader
        return ok && !failed ? 0 : -1
    }

    /// Writes everything queued for `id` in one raw write.
    private func writable(_ wsi: OpaquePointer, _ id: Int) -> Int32 {
        guard links.keys.contains(id) else { return -1 }
        let count = links[id]!.outgoing.count
        if count > 0 {
            links[id]!.buffer.reserve(count)
            let payload = links[id]!.buffer.payload
            links[id]!.outgoing.withUnsafeBytes { payload.copyMemory(from: $0.baseAddress!, byteCount: count) }
            links[id]!.outgoing.removeAll(keepingCapacity: true)
            if lws_write(wsi, payload.assumingMemoryBound(to: UInt8.self), count, mrd_lws_write_raw()) < 0 { return -1 }
        }
        return links[id]!.closeAfterWrite ? -1 : 0
    }
}
