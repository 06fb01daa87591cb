internal import CLibWebSockets
import Glibc

/// An end-of-pass write queued in the loop's ``SendRing``: the bytes stay in the connection's
/// write buffer until the batch is made.
struct BatchedWrite {
    let connection: Connection
    let bytes: UnsafeMutableRawPointer
    let count: Int
}

extension ServerLoop {
    /// An end-of-pass write: into the pass's batch (``TransportConfiguration/writeBatch``), or
    /// made at once where there is no batch.
    func writeAtPassEnd(_ connection: Connection) {
        if writeQueue(of: connection, wsi: connection.wsi, batchingIn: sendRing) < 0 { abandon(connection) }
    }

    /// Queues `count` bytes of `connection`'s write buffer in `ring`; the batch is made once full.
    func batch(_ connection: Connection, socket: Int32, bytes: UnsafeMutableRawPointer, count: Int, in ring: SendRing) {
        _ = ring.queue(socket: socket, bytes: bytes, length: count)
        batchedWrites.append(BatchedWrite(connection: connection, bytes: bytes, count: count))
        if ring.isFull { completeBatchedWrites() }
    }

    /// Makes the batch's writes, in the order queued, and finishes each: what a socket did not
    /// take goes to lws, which holds it until WRITEABLE, as after any short write.
    func completeBatchedWrites() {
        guard let ring = sendRing, ring.count > 0 else { return }
        let working = ring.flush { place, result in
            let write = batchedWrites[place]
            var written = result
            if result != write.count {
                if result >= 0 || result == -EAGAIN {
                    let offset = max(0, Int(result))
                    counters.batchedWritesHandedOn += 1
                    written = lws_write(
                        write.connection.wsi, write.bytes.advanced(by: offset).assumingMemoryBound(to: UInt8.self),
                        write.count - offset, mrd_lws_write_raw())
                } else {
                    written = -1
                }
            }
            counters.batchedWrites += 1
            if finishWrite(of: write.connection, written: written) < 0 { abandon(write.connection) }
        }
        batchedWrites.removeAll(keepingCapacity: true)
        if !working {
            // The ring could not submit a batch (its writes were handed to lws above): each
            // write is made on its own from now on.
            sendRing = nil
            counters.writeBatchFailure = EIO
        }
    }

    /// A connection whose socket failed: lws closes it from its next service.
    func abandon(_ connection: Connection) {
        lws_set_timeout(connection.wsi, PENDING_TIMEOUT_CLOSE_SEND, LWS_TO_KILL_ASYNC)
    }
}
