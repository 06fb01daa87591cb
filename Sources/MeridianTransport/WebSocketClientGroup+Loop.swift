import Foundation
internal import CLibWebSockets

/// The C entry point of client-group contexts; the group is the context's user pointer and
/// each wsi's opaque user data is its integer id plus one (never a reference).
func clientGroupCallback(
    _ wsi: OpaquePointer?, _ reason: lws_callback_reasons,
    _ user: UnsafeMutableRawPointer?, _ input: UnsafeMutableRawPointer?, _ length: Int
) -> Int32 {
    guard let wsi, let context = lws_get_context(wsi), let owner = lws_context_user(context) else { return 0 }
    let group = Unmanaged<WebSocketClientGroup>.fromOpaque(owner).takeUnretainedValue()
    guard let tag = lws_get_opaque_user_data(wsi) else { return 0 }
    return group.handle(wsi: wsi, id: Int(bitPattern: tag) - 1, reason: reason, input: input, length: length)
}

private func groupTickCallback(_ sul: UnsafeMutablePointer<lws_sorted_usec_list_t>?) {
    guard let sul, let user = mrd_timer_from_sul(sul)?.pointee.user else { return }
    Unmanaged<WebSocketClientGroup>.fromOpaque(user).takeUnretainedValue().tick()
}

extension WebSocketClientGroup {
    func runServiceLoop() {
        configureLWSLogging()
        let names = (host: allocations.string(host), path: allocations.string(path), protocolName: allocations.string(subprotocol))
        cStrings = names
        let protocols = allocations.zeroed(lws_protocols.self, count: 2)
        protocols[0].name = UnsafePointer(names.protocolName)
        protocols[0].callback = clientGroupCallback
        protocols[0].rx_buffer_size = 64 * 1024
        protocols[0].tx_packet_size = 64 * 1024
        var info = lws_context_creation_info()
        info.port = CONTEXT_PORT_NO_LISTEN
        info.protocols = UnsafePointer(protocols)
        info.user = retainedSelf?.toOpaque()
        info.count_threads = 1
        guard let context = lws_create_context(&info) else {
            finish()
            return
        }
        self.context = context
        let timer = allocations.zeroed(mrd_timer.self)
        timer.pointee.user = retainedSelf?.toOpaque()
        tickTimer = timer
        scheduleTick()
        lock.lock()
        wakeableContext = context
        running = true
        lock.broadcast()
        lock.unlock()

        while true {
            lock.lock()
            let work = pendingWork
            pendingWork.removeAll(keepingCapacity: true)
            let stop = stopRequested
            lock.unlock()
            if stop { break }
            for body in work { body() }
            if lws_service(context, 0) < 0 { break }
        }
        lock.lock()
        wakeableContext = nil
        lock.unlock()
        mrd_timer_cancel(timer)
        handlerStorage = nil
        lws_context_destroy(context)
        self.context = nil
        cStrings = nil
        for key in links.keys { links[key]?.buffer.release() }
        links.removeAll()
        finish()
    }

    private func finish() {
        allocations.freeAll()
        lock.lock()
        threadEnded = true
        running = false
        pendingWork.removeAll()
        lock.broadcast()
        lock.unlock()
        retainedSelf?.release()
        retainedSelf = nil
    }

    private func scheduleTick() {
        guard let context, let tickTimer else { return }
        let usec = lws_usec_t(tickInterval.timeInterval * 1_000_000)
        mrd_timer_schedule(context, tickTimer, groupTickCallback, max(usec, 100))
    }

    func tick() {
        handlerStorage?.groupTick(self)
        scheduleTick()
    }

    /// Starts connecting `id` (service thread). The outcome arrives as didOpen or didClose.
    public func connect(_ id: Int) {
        guard let context, let names = cStrings, links[id] == nil else { return }
        var info = lws_client_connect_info()
        info.context = context
        info.address = UnsafePointer(names.host)
        info.port = Int32(port)
        info.path = UnsafePointer(names.path)
        info.host = info.address
        info.protocol = UnsafePointer(names.protocolName)
        info.local_protocol_name = info.protocol
        info.ietf_version_or_minus_one = -1
        info.opaque_user_data = UnsafeMutableRawPointer(bitPattern: id + 1)
        links[id] = Link()
        if let wsi = lws_client_connect_via_info(&info) {
            if links[id] != nil { links[id]?.wsi = wsi }
        } else if links.removeValue(forKey: id) != nil {
            handlerStorage?.group(self, didClose: id, code: nil, failed: true)
        }
    }

    /// Queues one text message for `id` (service thread).
    public func send(_ bytes: [UInt8], to id: Int) {
        guard let wsi = links[id]?.wsi, links[id]?.opened == true else { return }
        links[id]!.outgoing.append(bytes)
        lws_callback_on_writable(wsi)
    }

    /// Closes `id` with a close frame carrying `code` (service thread).
    public func close(_ id: Int, code: UInt16 = 1000) {
        guard let wsi = links[id]?.wsi else { return }
        links[id]!.closeRequest = code
        links[id]!.outgoing.removeAll()
        lws_callback_on_writable(wsi)
        lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, 5)
    }

    func handle(wsi: OpaquePointer, id: Int, reason: lws_callback_reasons, input: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        switch reason {
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            guard links[id] != nil else { return -1 }
            links[id]!.wsi = wsi
            links[id]!.opened = true
            handlerStorage?.group(self, didOpen: id)
        case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
            if var link = links.removeValue(forKey: id) {
                link.buffer.release()
                handlerStorage?.group(self, didClose: id, code: nil, failed: true)
            }
        case LWS_CALLBACK_CLIENT_RECEIVE:
            guard links[id] != nil else { return 0 }
            let first = lws_is_first_fragment(wsi) != 0
            let complete = lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0
            if first && complete {
                // The common case: a whole message in one piece, handed over without a copy.
                handlerStorage?.group(self, didReceive: UnsafeRawBufferPointer(start: input, count: length), from: id)
                return 0
            }
            if first { links[id]!.inbound.removeAll(keepingCapacity: true) }
            if let input, length > 0 {
                links[id]!.inbound.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
            }
            if complete {
                let whole = links[id]!.inbound
                links[id]!.inbound.removeAll(keepingCapacity: true)
                whole.withUnsafeBytes { handlerStorage?.group(self, didReceive: $0, from: id) }
            }
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            if let input, length >= 2 {
                let bytes = input.assumingMemoryBound(to: UInt8.self)
                links[id]?.peerClose = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
            }
        case LWS_CALLBACK_CLIENT_CLOSED:
            if var link = links.removeValue(forKey: id) {
                link.buffer.release()
                handlerStorage?.group(self, didClose: id, code: link.peerClose, failed: false)
            }
        case LWS_CALLBACK_CLIENT_WRITEABLE:
            return writable(wsi, id)
        default:
            break
        }
        return 0
    }

    /// One `lws_write` per WRITEABLE; lws masks in place, so each link has its own buffer.
    private func writable(_ wsi: OpaquePointer, _ id: Int) -> Int32 {
        guard links[id] != nil else { return -1 }
        if let code = links[id]!.closeRequest {
            var none: [UInt8] = []
            lws_close_reason(wsi, lws_close_status(rawValue: UInt32(code)), &none, 0)
            return -1
        }
        guard let message = links[id]!.outgoing.popFirst() else { return 0 }
        links[id]!.buffer.reserve(message.count)
        let payload = links[id]!.buffer.payload
        message.withUnsafeBytes { payload.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
        let written = lws_write(wsi, payload.assumingMemoryBound(to: UInt8.self), message.count, LWS_WRITE_TEXT)
        if written < 0 { return -1 }
        if !links[id]!.outgoing.isEmpty { lws_callback_on_writable(wsi) }
        return 0
    }
}
