import MeridianTransportCore
internal import CLibWebSockets

/// The RFC 6455 checks of ``InboundCheck``, applied where lws hands the server a client's data.
extension ServerLoop {
    /// LWS_CALLBACK_RECEIVE, for each piece of a text message before it is buffered: closes the
    /// connection (1007) and returns false when the client broke a rule.
    func inboundConforms(_ connection: Connection, wsi: OpaquePointer, input: UnsafeMutableRawPointer?, length: Int) -> Bool {
        let bytes = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
        let first = lws_is_first_fragment(wsi) != 0
        let last = lws_is_final_fragment(wsi) != 0 && lws_remaining_packet_payload(wsi) == 0
        guard let violation = connection.inboundCheck.text(bytes, first: first, last: last) else { return true }
        close(connection, code: violation.code, reason: violation.reason)
        return false
    }

    /// LWS_CALLBACK_WS_PEER_INITIATED_CLOSE: records the client's close; a close frame that breaks
    /// the rules (a 1-byte payload, a code a client may not send, a reason that is not UTF-8) is
    /// answered with 1002 or 1007 instead of being echoed. Returning -1 with a close reason makes
    /// lws send that close frame and end the connection.
    func peerInitiatedClose(wsi: OpaquePointer, user: UnsafeMutableRawPointer?, input: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        connection(for: user)?.peerClose = parseClosePayload(input, length)
        let payload = UnsafeRawBufferPointer(start: input, count: input == nil ? 0 : length)
        guard let violation = InboundCheck.closePayload(payload) else { return 0 }
        var reason = closeReasonBytes(violation.reason)
        lws_close_reason(wsi, lws_close_status(rawValue: UInt32(violation.code)), &reason, reason.count)
        return -1
    }
}
