import DequeModule
import MeridianTransportCore
internal import CLibWebSockets

/// The single C entry point of client contexts; the connection is the context's user pointer.
func clientCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons,
    _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?, _ length: Int
) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let owner = lws_context_user(context) else {
        return 0
    }
    let connection = Unmanaged<ClientConnection>.fromOpaque(owner).takeUnretainedValue()
    return connection.handleCallback(wsi: wsi, reason: reason, input: input, length: length)
}

/// The lws side of one ``WebSocketClient``: its context's connection, what it still has to
/// write and the message it is reading.
///
/// Confined to the client's service thread by construction: it is made there by
/// ``open(_:mailbox:thread:)``, reached only from lws callbacks and from work the client queues
/// with ``ServiceThread/execute(_:)``, and it is not `Sendable`. What the client's users see
/// goes through the ``ClientMailbox``.
final class ClientConnection: ServiceLoop {
    /// Where and how to connect. Plain values, handed from the client to the service thread.
    struct Settings: Sendable {
        var host: String
        var port: Int
        var path: String
        var subprotocol: String?
        var tls: WebSocketClient.TLS?
        /// Extra handshake headers, written from LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER.
        var headers: [String: String]
    }

    /// Largest part written per WRITEABLE; bigger messages go as continuation frames.
    static let partSize = 64 * 1024

    let settings: Settings
    let mailbox: ClientMailbox
    let thread: ServiceThread<ClientConnection>
    let allocations = CAllocations()
    var wsi: OpaquePointer?
    var outgoing = Deque<[UInt8]>()
    var outgoingOffset = 0
    var partBuffer = WriteBuffer(headroom: Int(mrd_lws_pre()))
    var inbound: [UInt8] = []
    var closeRequest: (code: UInt16, reason: String)?
    var closeFrameSent = false
    var peerClose: (code: UInt16?, reason: String)?

    private init(settings: Settings, mailbox: ClientMailbox, thread: ServiceThread<ClientConnection>) {
        self.settings = settings
        self.mailbox = mailbox
        self.thread = thread
    }

    /// Runs first on the service thread: creates the context and starts connecting. The
    /// outcome of the handshake reaches the mailbox later.
    static func open(
        _ settings: Settings, mailbox: ClientMailbox, thread: ServiceThread<ClientConnection>
    ) throws(TransportError) -> ServiceStart<ClientConnection, Void> {
        let connection = ClientConnection(settings: settings, mailbox: mailbox, thread: thread)
        guard let context = connection.makeContext() else {
            connection.releaseMemory()
            throw .connectFailed("could not create a client context")
        }
        guard connection.connect(context) else {
            lws_context_destroy(context)
            connection.releaseMemory()
            throw .connectFailed("could not start connecting to \(settings.host):\(settings.port)")
        }
        return ServiceStart(loop: connection, context: context)
    }

    private var localProtocolName: String { settings.subprotocol ?? "meridian-client" }

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
        // Valid while the context lives: the service thread holds the connection until then.
        info.user = Unmanaged.passUnretained(self).toOpaque()
        info.count_threads = 1
        if let tls = settings.tls {
            info.options |= UInt64(LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT)
            info.client_ssl_ca_filepath = tls.caFilePath.map { UnsafePointer(allocations.string($0)) }
            info.client_ssl_cert_filepath = tls.certificateFilePath.map { UnsafePointer(allocations.string($0)) }
            info.client_ssl_private_key_filepath = tls.privateKeyFilePath.map { UnsafePointer(allocations.string($0)) }
        }
        return lws_create_context(&info)
    }

    private func connect(_ context: OpaquePointer) -> Bool {
        var info = lws_client_connect_info()
        info.context = context
        info.address = UnsafePointer(allocations.string(settings.host))
        info.port = Int32(settings.port)
        info.path = UnsafePointer(allocations.string(settings.path))
        info.host = UnsafePointer(allocations.string(settings.tls?.serverName ?? settings.host))
        // No info.origin: lws would send it as "http://" + value. An Origin goes in the headers.
        if let tls = settings.tls {
            var flags = LCCSCF_USE_SSL.rawValue
            if tls.allowSelfSigned { flags |= LCCSCF_ALLOW_SELFSIGNED.rawValue }
            if tls.skipHostnameCheck { flags |= LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK.rawValue }
            info.ssl_connection = Int32(flags)
        }
        info.protocol = settings.subprotocol.map { UnsafePointer(allocations.string($0)) }
        info.local_protocol_name = UnsafePointer(allocations.string(localProtocolName))
        info.ietf_version_or_minus_one = -1
        wsi = lws_client_connect_via_info(&info)
        return wsi != nil
    }

    /// The context is gone: frees the C memory and tells a client still connecting that it failed.
    func serviceDidDestroyContext() {
        releaseMemory()
        mailbox.ended(failure: .connectFailed("connection closed during the handshake"))
    }

    private func releaseMemory() {
        allocations.freeAll()
        partBuffer.release()
        wsi = nil
    }

    // MARK: Work from the client

    func send(_ bytes: [UInt8]) {
        guard let wsi else { return }
        outgoing.append(bytes)
        lws_callback_on_writable(wsi)
    }

    func pauseReading() {
        if let wsi { lws_rx_flow_control(wsi, 0) }
    }

    func resumeReading() {
        if let wsi { lws_rx_flow_control(wsi, 1) }
    }

    /// Sends a close frame from the next WRITEABLE; the loop ends once lws closed the connection.
    func close(code: UInt16, reason: String) {
        guard let wsi else {
            thread.requestExit()
            return
        }
        if closeRequest == nil { closeRequest = (code, reason) }
        outgoing.removeAll()
        lws_callback_on_writable(wsi)
        // Backstop in case the socket never becomes writable again.
        lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, 5)
    }

    // MARK: lws callbacks

    func handleCallback(
        wsi: OpaquePointer, reason: lws_callback_reasons, input: UnsafeMutableRawPointer?, length: Int
    ) -> Int32 {
        switch reason {
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            mailbox.opened()
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            let detail = input.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) } ?? "connection error"
            self.wsi = nil
            thread.requestExit()
            mailbox.ended(failure: .connectFailed(detail))
        case LWS_CALLBACK_CLIENT_RECEIVE:
            if lws_is_first_fragment(wsi) != 0 { inbound.removeAll(keepingCapacity: true) }
            if let input, length > 0 {
                inbound.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
            }
            if lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0 {
                let text = String(decoding: inbound, as: UTF8.self)
                inbound.removeAll(keepingCapacity: true)
                mailbox.received(text)
            }
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            peerClose = parseClosePayload(input, length)
        case LWS_CALLBACK_CLIENT_CLOSED:
            self.wsi = nil
            thread.requestExit()
            var code = peerClose?.code
            if code == 1005 || code == 1006 { code = nil }
            mailbox.ended(
                failure: .connectFailed("connection closed during the handshake"),
                code: code, reason: peerClose?.reason ?? "")
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

    /// Adds the extra headers to the upgrade request. `input` points at the write cursor
    /// (`char **`), `length` is the room left.
    private func appendHeaders(_ wsi: OpaquePointer, _ input: UnsafeMutableRawPointer?, _ length: Int) -> Int32 {
        guard !settings.headers.isEmpty, let input else { return 0 }
        let cursor = input.assumingMemoryBound(to: UnsafeMutablePointer<UInt8>?.self)
        guard let start = cursor.pointee else { return 0 }
        let end = start + length
        for (name, value) in settings.headers {
            let token = Array((name.hasSuffix(":") ? name : name + ":").utf8) + [0]
            let bytes = Array(value.utf8)
            if lws_add_http_header_by_name(wsi, token, bytes, Int32(bytes.count), cursor, end) != 0 { return -1 }
        }
        return 0
    }
}
