import Glibc
internal import CLibWebSockets

/// New connections whose first bytes have not been read yet, held out of the event loop's reads
/// (`lws_rx_flow_control`) in an epoll set of their sockets. The loop watches the set itself, and
/// each pass lets through at most ``TransportConfiguration/handshakesPerPass`` of those whose
/// request came. A burst of handshakes is then served a share a pass, however many passes its
/// connections were accepted over, and connections that never send cost nothing until lws's
/// handshake timeout closes them.
struct HandshakeGate: ~Copyable {
    /// The epoll set (level-triggered, input only); -1 when it could not be made (nothing is held).
    let descriptor: Int32
    private var held: [Int32: OpaquePointer] = [:]
    private var sockets: [OpaquePointer: Int32] = [:]
    private var ready: [Int32]

    init(batch: Int) {
        descriptor = mrd_readiness_new()
        ready = Array(repeating: -1, count: max(1, batch))
    }

    deinit {
        if descriptor >= 0 { Glibc.close(descriptor) }
    }

    var isEmpty: Bool { held.isEmpty }

    /// Holds `wsi` (its socket `socket`) until its first bytes come and its turn with them; false
    /// when it cannot be watched (it is then read as usual).
    mutating func hold(_ wsi: OpaquePointer, socket: Int32) -> Bool {
        guard descriptor >= 0, socket >= 0, held[socket] == nil, mrd_readiness_watch(descriptor, socket) == 0 else { return false }
        held[socket] = wsi
        sockets[wsi] = socket
        return true
    }

    /// Forgets a held connection that lws is freeing (it closed the socket: the kernel has
    /// dropped it from the set).
    mutating func forget(_ wsi: OpaquePointer) {
        guard let socket = sockets.removeValue(forKey: wsi) else { return }
        held[socket] = nil
        mrd_readiness_forget(descriptor, socket)
    }

    /// Up to `limit` held connections with bytes waiting, no longer held.
    mutating func takeReady(limit: Int) -> [OpaquePointer] {
        guard !held.isEmpty, limit > 0 else { return [] }
        let count = ready.withUnsafeMutableBufferPointer { buffer in
            Int(mrd_readiness_take(descriptor, buffer.baseAddress, Int32(min(limit, buffer.count))))
        }
        var taken: [OpaquePointer] = []
        for socket in ready.prefix(max(0, count)) {
            mrd_readiness_forget(descriptor, socket)
            guard let wsi = held.removeValue(forKey: socket) else { continue }
            sockets[wsi] = nil
            taken.append(wsi)
        }
        return taken
    }
}
