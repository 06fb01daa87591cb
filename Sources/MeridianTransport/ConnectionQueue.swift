/// The outbound queue of one connection: pre-framed frames in order.
///
/// Frames are written whole, never split across writes: libwebsockets may send a PING of its
/// own between two writes, which must not land inside a frame. A large message that should
/// not be written at once is queued as several fragments (``OutboundFrame/init(fragment:first:last:)``).
///
/// Conflation costs nothing per recipient: a transient frame is marked superseded once,
/// on the frame, when a newer one of its kind is queued for everyone who holds it
/// (``OutboundFrame/superseded``). A queue that is behind skips such frames when writing
/// (the writer says so: `conflating`), and drops them all at once when a slow reader's queue
/// grows (``compact()``); until then their bytes still count in ``bytes``. A queue that keeps
/// up writes them: a newer frame of the same kind follows, so nothing is lost but latency.
///
/// Entries do not retain their frame one by one: a broadcast queues the same frame for
/// every member, and an atomic retain and release per recipient cost more than the rest of
/// the queueing. The frame counts its queued copies (``OutboundFrame/holders``, service
/// thread only) and is retained once while any queue holds it. Every entry that leaves the
/// queue goes through `drop(_:)`; a queue must be emptied with ``removeAll()`` before it is
/// discarded.
struct ConnectionQueue {
    typealias Entry = FrameRing.Entry

    /// Queued frames; an entry is `exempt` when it was a shared frame within its ledger's
    /// budget when queued.
    private var entries = FrameRing()

    /// Bytes queued and not yet written, superseded frames included until they are dropped;
    /// exempt frames not included.
    private(set) var bytes = 0
    /// Bytes of exempt frames queued and not yet written.
    private(set) var exemptBytes = 0
    /// Whether the last frame written left its message unfinished (a fragment without FIN): the
    /// next frame written must be the message's next fragment.
    private(set) var midMessage = false
    /// Frames queued, superseded ones included.
    var count: Int { entries.count }
    var isEmpty: Bool { entries.isEmpty }

    /// Appends a frame at the end; an `exempt` frame's bytes do not count in ``bytes``.
    mutating func append(_ frame: OutboundFrame, exempt: Bool = false) {
        if frame.holders == 0 { _ = Unmanaged.passRetained(frame) }
        frame.holders += 1
        entries.append(Entry(frame: .passUnretained(frame), exempt: exempt))
        account(frame.byteCount, exempt: exempt, sign: 1)
    }

    private mutating func account(_ size: Int, exempt: Bool, sign: Int) {
        if exempt { exemptBytes += sign * size } else { bytes += sign * size }
    }

    /// The size of the first frame that will be written, nil when nothing will. When
    /// `conflating`, superseded frames at the head are dropped first.
    mutating func firstSize(conflating: Bool = true) -> Int? {
        while let head = entries.first {
            let (size, superseded) = head.frame._withUnsafeGuaranteedRef { ($0.byteCount, $0.superseded) }
            guard superseded, conflating else { return size }
            removeHead()
            account(size, exempt: head.exempt, sign: -1)
            conflatedSinceLastDrain += 1
        }
        return nil
    }

    /// Superseded frames dropped by ``firstSize()`` since the last ``drain(into:capacity:)``.
    private var conflatedSinceLastDrain = 0

    /// Copies whole frames, oldest first, into `buffer` while they fit in `capacity` bytes, and
    /// removes them. When `conflating`, superseded frames are dropped, not copied.
    mutating func drain(into buffer: UnsafeMutableRawPointer, capacity: Int, conflating: Bool = true) -> (copied: Int, conflated: Int) {
        var used = 0
        var conflated = conflatedSinceLastDrain
        conflatedSinceLastDrain = 0
        while let head = entries.first {
            let (size, superseded) = head.frame._withUnsafeGuaranteedRef { ($0.byteCount, $0.superseded) }
            if superseded, conflating {
                removeHead()
                account(size, exempt: head.exempt, sign: -1)
                conflated += 1
                continue
            }
            guard used + size <= capacity else { break }
            head.frame._withUnsafeGuaranteedRef { frame in
                frame.withBytes { (buffer + used).copyMemory(from: $0.baseAddress!, byteCount: size) }
                midMessage = !frame.wire.isFinal
            }
            used += size
            account(size, exempt: head.exempt, sign: -1)
            removeHead()
        }
        return (used, conflated)
    }

    /// Removes the first frame (which ``firstSize(conflating:)`` has just sized) and passes its
    /// bytes, header included, to `write` while the frame is still held: a large frame goes
    /// out from where it is, shared or not, without a copy.
    /// Returns what `write` returned and the superseded frames dropped since the last write.
    mutating func writeFirst<R>(_ write: (UnsafeRawBufferPointer) -> R) -> (R, conflated: Int) {
        let head = entries.first!
        let (size, result) = head.frame._withUnsafeGuaranteedRef { ($0.byteCount, $0.withBytes(write)) }
        midMessage = head.frame._withUnsafeGuaranteedRef { !$0.wire.isFinal }
        account(size, exempt: head.exempt, sign: -1)
        removeHead()
        defer { conflatedSinceLastDrain = 0 }
        return (result, conflatedSinceLastDrain)
    }

    /// Drops every superseded frame. Returns how many went.
    mutating func compact() -> Int {
        var dropped = 0
        var freed = 0, freedExempt = 0
        entries.filter { entry in
            let (size, superseded) = entry.frame._withUnsafeGuaranteedRef { ($0.byteCount, $0.superseded) }
            guard superseded else { return true }
            if entry.exempt { freedExempt += size } else { freed += size }
            dropped += 1
            Self.drop(entry)
            return false
        }
        bytes -= freed
        exemptBytes -= freedExempt
        return dropped
    }

    /// Gives back the storage an empty queue keeps from its busiest moment.
    mutating func releaseStorage() {
        guard isEmpty else { return }
        entries.deallocate()
    }

    /// Drops every frame but those that finish a message partly written (``midMessage``): a
    /// connection being closed ends its message in progress before the close frame, which a
    /// client could otherwise take for a protocol error ("incomplete fragmented message").
    mutating func removeAllButTheMessageInProgress() {
        guard midMessage else { return removeAll() }
        var ended = false, freed = 0, freedExempt = 0
        entries.filter { entry in
            let (size, final) = entry.frame._withUnsafeGuaranteedRef { ($0.byteCount, $0.wire.isFinal) }
            guard ended else {
                ended = final
                return true
            }
            if entry.exempt { freedExempt += size } else { freed += size }
            Self.drop(entry)
            return false
        }
        bytes -= freed
        exemptBytes -= freedExempt
    }

    /// Drops everything.
    mutating func removeAll() {
        entries.forEach(Self.drop)
        entries.deallocate()
        bytes = 0
        exemptBytes = 0
    }

    private mutating func removeHead() {
        Self.drop(entries.removeFirst())
    }

    /// One entry left the queue: the frame's last holder gives up its single retain.
    private static func drop(_ entry: Entry) {
        let last = entry.frame._withUnsafeGuaranteedRef { frame in
            frame.holders -= 1
            return frame.holders == 0
        }
        if last { entry.frame.release() }
    }
}
