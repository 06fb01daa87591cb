internal import CLibWebSockets

/// Connections over TLS take the ws role (see ``ClientGroupLoop/connect(_:)``): lws makes the
/// upgrade and the frames; the group hands whole messages to the handler as it does over RAW.
extension ClientGroupLoop {
    func handleWebSocketRole(wsi: OpaquePointer, id: Int, reason: lws_callback_reasons,
                             input: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        switch reason {
        case LWS_CALLBACK_CLIENT_ESTABLISHED:
            guard links.keys.contains(id) else { return -1 }
            links[id]!.wsi = wsi
            links[id]!.opened = true
            handler?.group(self, didOpen: id)
        case LWS_CALLBACK_CLIENT_RECEIVE:
            guard links.keys.contains(id) else { return -1 }
            if let input, length > 0 {
                let room = configuration.keptMessagePrefix.map { max(0, $0 - links[id]!.partial.count) } ?? length
                links[id]!.partial.append(contentsOf: UnsafeRawBufferPointer(start: input, count: min(length, room)))
            }
            guard lws_is_final_fragment(wsi) != 0 else {
                messageInFlight = true
                return 0
            }
            let message = links[id]!.partial
            links[id]!.partial.removeAll(keepingCapacity: true)
            handler?.group(self, willRead: id)
            message.withUnsafeBytes { handler?.group(self, didReceive: $0, from: id) }
        case LWS_CALLBACK_CLIENT_WRITEABLE:
            return writeMessages(wsi, id)
        case LWS_CALLBACK_WS_PEER_INITIATED_CLOSE:
            if let input, length >= 2, links.keys.contains(id) {
                let bytes = input.assumingMemoryBound(to: UInt8.self)
                links[id]!.peerClose = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
            }
        case LWS_CALLBACK_CLIENT_CLOSED:
            if let link = links.removeValue(forKey: id) {
                link.buffer.release()
                handler?.group(self, didClose: id, code: link.peerClose, failed: !link.opened)
            }
        default:
            break
        }
        return 0
    }

    /// Writes the queued messages while the socket takes them; a close asked for goes last.
    private func writeMessages(_ wsi: OpaquePointer, _ id: Int) -> Int32 {
        guard links.keys.contains(id) else { return -1 }
        if links[id]!.closing {
            let code = links[id]!.closeCode
            lws_close_reason(wsi, lws_close_status(rawValue: UInt32(code)), nil, 0)
            return -1
        }
        while !links[id]!.messages.isEmpty, lws_send_pipe_choked(wsi) == 0 {
            let message = links[id]!.messages.removeFirst()
            links[id]!.buffer.reserve(message.count)
            let payload = links[id]!.buffer.payload
            message.withUnsafeBytes { if let base = $0.baseAddress { payload.copyMemory(from: base, byteCount: message.count) } }
            if lws_write(wsi, payload.assumingMemoryBound(to: UInt8.self), message.count, LWS_WRITE_TEXT) < 0 { return -1 }
        }
        if !links[id]!.messages.isEmpty { lws_callback_on_writable(wsi) }
        return 0
    }
}
