/// A growable ring of queued frames. Its header (three integers and a pointer) lives inline
/// in the connection's hot state, so queueing a frame touches that state and one slot of the
/// ring, and nothing else; the storage is freed by ``deallocate()``.
struct FrameRing {
    struct Entry {
        let frame: Unmanaged<OutboundFrame>
        /// The frame's bytes do not count towards the connection's limits (see ``ConnectionQueue``).
        let exempt: Bool
    }

    private var storage: UnsafeMutablePointer<Entry>?
    private var capacity = 0
    private var head = 0
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    var first: Entry? { count == 0 ? nil : storage![head] }

    @inline(__always)
    mutating func append(_ entry: Entry) {
        if count == capacity { grow() }
        storage![(head + count) & (capacity - 1)] = entry
        count += 1
    }

    @discardableResult
    mutating func removeFirst() -> Entry {
        precondition(count > 0, "removeFirst on an empty ring")
        let entry = storage![head]
        head = (head + 1) & (capacity - 1)
        count -= 1
        return entry
    }

    /// The entries, oldest first.
    func forEach(_ body: (Entry) -> Void) {
        for i in 0..<count { body(storage![(head + i) & (capacity - 1)]) }
    }

    /// Keeps the entries for which `keep` is true, in order.
    mutating func filter(_ keep: (Entry) -> Bool) {
        var kept = 0
        for i in 0..<count {
            let entry = storage![(head + i) & (capacity - 1)]
            if keep(entry) {
                storage![(head + kept) & (capacity - 1)] = entry
                kept += 1
            }
        }
        count = kept
    }

    /// Forgets every entry (their frames are the caller's to release) and frees the storage.
    mutating func deallocate() {
        storage?.deallocate()
        storage = nil
        capacity = 0
        head = 0
        count = 0
    }

    private mutating func grow() {
        let newCapacity = max(16, capacity * 2)
        let newStorage = UnsafeMutablePointer<Entry>.allocate(capacity: newCapacity)
        for i in 0..<count { (newStorage + i).initialize(to: storage![(head + i) & (capacity - 1)]) }
        storage?.deallocate()
        storage = newStorage
        capacity = newCapacity
        head = 0
    }
}
