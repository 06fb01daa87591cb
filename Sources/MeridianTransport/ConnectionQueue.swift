import DequeModule

/// The outbound queue of one connection: pre-framed frames in order, with O(1) conflation
/// of transient frames and a running byte count of the frames still to be written.
///
/// A transient frame (with a key) supersedes the newest queued frame with the same key.
/// Superseded entries stay in the deque (removing from the middle would be O(n)) but their
/// bytes are subtracted at once; they are recognised by their stamp no longer matching
/// `newest[key]` and skipped when writing.
struct ConnectionQueue {
    struct Entry {
        let frame: OutboundFrame
        let key: Int?
        let stamp: UInt64
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
        entries.append(Entry(frame: frame, key: key, stamp: stamp))
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

    /// The next live frame, without removing it.
    mutating func first() -> OutboundFrame? {
        dropStaleHead()
        return entries.first?.frame
    }

    /// Removes the next live frame (the one ``first()`` returned).
    mutating func removeFirst() {
        dropStaleHead()
        guard let entry = entries.popFirst() else { return }
        bytes -= entry.frame.bytes.count
        count -= 1
        if let key = entry.key { newest[key] = nil }
    }

    /// Drops everything.
    mutating func removeAll() {
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
        }
    }

    /// A connection that never drains could pile up superseded entries; rebuild when they dominate.
    private mutating func compactIfMostlyStale() {
        guard staleCount > 256, staleCount * 2 > entries.count else { return }
        entries = Deque(entries.filter(isLive))
        staleCount = 0
    }
}
