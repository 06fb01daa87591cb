internal import CLibWebSockets
import Glibc

/// Socket writes made a batch at a time, in one system call (io_uring): the writes of a pass's
/// fan-out ``capacity`` at once instead of one `send` each. Each write is made in the kernel in
/// the order queued and never waits there: a socket that cannot take the bytes answers
/// `-EAGAIN`, and the caller gives them to lws as before (``ServerLoop/flushAtPassEnd()``).
final class SendRing {
    private let ring: UnsafeMutablePointer<mrd_send_ring>
    /// Each queued write's result, by its place in the batch.
    private var results: [Int32]
    private(set) var count = 0
    let capacity: Int

    /// A ring for batches of `capacity` writes; nil, with the reason in `failure`, where io_uring
    /// cannot be used (an old kernel, a seccomp profile that forbids it, `kernel.io_uring_disabled`).
    init?(capacity: Int, failure: inout Int32) {
        var error: Int32 = 0
        guard let ring = mrd_send_ring_new(UInt32(capacity), &error) else {
            failure = error
            return nil
        }
        self.ring = ring
        self.capacity = capacity
        results = Array(repeating: 0, count: capacity)
    }

    deinit {
        mrd_send_ring_free(ring)
    }

    var isFull: Bool { count == capacity }

    /// Queues a write of `length` bytes at `bytes` to `socket`, which must stay valid until
    /// ``flush()``: its place in the batch.
    func queue(socket: Int32, bytes: UnsafeRawPointer, length: Int) -> Int {
        precondition(count < capacity, "SendRing queued past its capacity")
        let place = count
        let queued = mrd_send_ring_queue(ring, socket, bytes, length, UInt64(place))
        precondition(queued == 0, "io_uring submission queue smaller than the batch")
        results[place] = -EAGAIN
        count += 1
        return place
    }

    /// Makes the queued writes and calls `done` with each one's place and result (bytes written,
    /// or -errno; -EAGAIN for one not made), in order. False when the ring failed and must not be
    /// used again.
    func flush(_ done: (Int, Int32) -> Void) -> Bool {
        guard count > 0 else { return true }
        let made = count
        count = 0
        let outcome = results.withUnsafeMutableBufferPointer { results in
            mrd_send_ring_flush(ring, results.baseAddress!, UInt32(made))
        }
        for place in 0..<made { done(place, results[place]) }
        return outcome == 0
    }
}

extension WebSocketServer {
    /// Why end-of-pass writes cannot be batched on this machine (``TransportConfiguration/writeBatch``):
    /// nil when they can.
    public static func writeBatchingUnavailable() -> String? {
        var failure: Int32 = 0
        guard SendRing(capacity: 1, failure: &failure) == nil else { return nil }
        return "io_uring unavailable: " + String(cString: strerror(failure))
    }
}
