/// Per-connection state, confined to the service thread. lws's per-session memory holds only
/// the `id`; this object lives in the server's dictionary.
final class Connection {
    let id: ConnectionID
    /// The `struct lws *`; valid until LWS_CALLBACK_CLOSED.
    let wsi: OpaquePointer
    var queue = ConnectionQueue()
    var writeBuffer: WriteBuffer
    var writableRequested = false
    /// When the connection last wrote (server `now`), for releasing idle buffers.
    var lastWrite = Duration.zero
    /// When the queue went above the high-water mark (server `now`), nil when not behind.
    var behindSince: Duration?
    /// Set once the server decided to close; the close frame goes out from WRITEABLE.
    var closing: (code: UInt16, reason: String)?
    /// True once the close frame was handed to lws (it then awaits the peer's answer).
    var closeFrameSent = false
    /// True once the handler was told the connection closed (for a close the
    /// server decided, at the next tick, before lws has finished closing it).
    var reported = false
    /// The peer's close frame, if it sent one.
    var peerClose: (code: UInt16?, reason: String)?

    /// Reassembly of the current inbound message.
    var inbound: [UInt8] = []
    /// RFC 6455 checks of the inbound messages (UTF-8 across pieces and fragments).
    var inboundCheck = InboundCheck()
    /// True once the connection is being closed: its input is ignored from then on.
    var refusingInput = false

    init(id: ConnectionID, wsi: OpaquePointer, headroom: Int) {
        self.id = id
        self.wsi = wsi
        self.writeBuffer = WriteBuffer(headroom: headroom)
    }

    deinit {
        // Only dropped after LWS_CALLBACK_CLOSED, when lws no longer reads the buffer.
        writeBuffer.release()
        // Queued frames are not retained one by one (see ConnectionQueue).
        queue.removeAll()
    }
}
