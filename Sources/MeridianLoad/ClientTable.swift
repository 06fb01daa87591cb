/// A worker's clients by global index. Worker `w` of `T` holds indices `w, w+T, w+2T, …`,
/// so a client lives at slot `index / T` of a flat array: no hashing on the hot path.
struct ClientTable {
    /// Every slot holds a client; `present` says which are real (the others are placeholders),
    /// so a client is changed in place, never copied out of an optional.
    private var slots: [SimulatedClient] = []
    private var present: [Bool] = []
    private let stride: Int

    init(stride: Int) { self.stride = max(stride, 1) }

    subscript(index: Int) -> SimulatedClient? {
        get {
            let slot = index / stride
            return slot < slots.count && present[slot] ? slots[slot] : nil
        }
        _modify {
            let slot = index / stride
            if slot >= slots.count {
                let added = slot - slots.count + 1
                slots.append(contentsOf: repeatElement(Self.placeholder, count: added))
                present.append(contentsOf: repeatElement(false, count: added))
            }
            // Moved out for the access and back after it: never two owners of its storage.
            var client: SimulatedClient?
            if present[slot] {
                var taken = Self.placeholder
                swap(&taken, &slots[slot])
                client = taken
            }
            defer {
                present[slot] = client != nil
                if let client { slots[slot] = client }
            }
            yield &client
        }
    }

    private static let placeholder = SimulatedClient(index: -1, session: 0, role: .listener)

    /// Runs `body` on client `index` in place; nil when there is none.
    @discardableResult
    mutating func update<Result>(_ index: Int, _ body: (inout SimulatedClient) -> Result) -> Result? {
        let slot = index / stride
        guard slot < slots.count, present[slot] else { return nil }
        return body(&slots[slot])
    }

    var all: [SimulatedClient] { zip(slots, present).compactMap { $1 ? $0 : nil } }
}
