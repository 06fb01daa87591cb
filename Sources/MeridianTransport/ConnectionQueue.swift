import DequeModule

/// The outbound queue of one connection: pre-framed frames in order, with O(1) conflation
/// of transient frames and a running byte count of the frames still to be written.
///
/// A transient frame (with a key) supersedes the newest queued frame with the same key.
/// Superseded entries stay in the deque (removing from the middle would be O(n)) but their
/// bytes are subtracted at once; they are recognised by their stamp no longer matching
/// `newest[key]` and skipped when writing.
///
/// Entries do not retain their frame one by one: a broadcast queues the same frame for
/// every member, and an atomic retain and release per recipient cost more than the rest of
/// the queueing. The frame counts its queued copies (``OutboundFrame/holders``, service
/// thread only) and is retained once while any queue holds it. Every entry that leaves the
/// queue goes through `drop(_:)`; a queue must be emptied with ``removeAll()`` before it is
/// discarded.
struct ConnectionQueue {
    struct Entry {
        let frame: Unmanaged<OutboundFrame>
        let key: Int?
        let stamp: UInt64
        var size: Int { frame._withUnsafeGuaranteedRef { $0.bytes.count } }
    }

    private var entries = Deque<Entry>()
    /// Newest queued entry per key: its stamp and size.
    private var newest: [Int: (stamp: UInt64, size: Int)] = [:]
    private var nextStamp: UInt64 = 1
    private var staleCount = 0

    /// Bytes of live (not superseded) frames still queued.
    private(set) var bytes = 0
    /// Live frames still queued.
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    /// Appends a frame at the end. Returns true if an earlier frame with the same key was dropped.
    @discardableResult
    mutating func append(_ frame: OutboundFrame, key: Int?) -> Bool {
        let size = frame.bytes.count
        let stamp = nextStamp
        nextStamp &+= 1
        if frame.holders == 0 { _ = Unmanaged.passRetained(frame) }
        frame.holders += 1
        entries.append(Entry(frame: .passUnretained(frame), key: key, stamp: stamp))
        bytes += size
        count += 1
        guard let key else { return false }
        let previous = newest.updateValue((stamp, size), forKey: key)
        guard let previous else { return false }
        bytes -= previous.size
        count -= 1
        staleCount += 1
        compactIfMostlyStale()
        return true
    }

    /// The size of the next live frame, nil when empty.
    mutating func firstSize() -> Int? {
        dropStaleHead()
        return entries.first?.size
    }

    /// Copies whole live frames, oldest first, into `buffer` while they fit in `capacity`
    /// bytes, and removes them. Returns the bytes copied.
    mutating func drain(into buffer: UnsafeMutableRawPointer, capacity: Int) -> Int {
        var used = 0
        while true {
            dropStaleHead()
            guard let entry = entries.first else { break }
            let size = entry.size
            guard used + size <= capacity else { break }
            entry.frame._withUnsafeGuaranteedRef { frame in
                frame.bytes.withUnsafeBytes { (buffer + used).copyMemory(from: $0.baseAddress!, byteCount: size) }
            }
            used += size
            entries.removeFirst()
            bytes -= size
            count -= 1
            if let key = entry.key { newest[key] = nil }
            drop(entry)
        }
        return used
    }

    /// Gives back the storage an empty queue keeps from its busiest moment.
    mutating func releaseStorage() {
        guard isEmpty else { return }
        removeAll()
        entries = Deque()
        newest = [:]
    }

    /// Drops everything.
    mutating func removeAll() {
        for entry in entries { drop(entry) }
        entries.removeAll()
        newest.removeAll()
        bytes = 0
        count = 0
        staleCount = 0
    }

    private func isLive(_ entry: Entry) -> Bool {
        guard let key = entry.key else { return true }
        return newest[key]?.stamp == entry.stamp
    }

    private mutating func dropStaleHead() {
        while let head = entries.first, !isLive(head) {
            entries.removeFirst()
            staleCount -= 1
            drop(head)
        }
    }

    /// A connection that never drains could pile up superseded entries; rebuild when they dominate.
    private mutating func compactIfMostlyStale() {
        guard staleCount > 256, staleCount * 2 > entries.count else { return }
        var live = Deque<Entry>()
        for entry in entries {
            if isLive(entry) { live.append(entry) } else { drop(entry) }
        }
        entries = live
        staleCount = 0
    }

    /// One entry left the queue: the frame's last holder gives up its single retain.
    private func drop(_ entry: Entry) {
        let last = entry.frame._withUnsafeGuaranteedRef { frame in
            frame.holders -= 1
            return frame.holders == 0
        }
        if last { entry.frame.release() }
    }
}
