/// A worker's clients by global index. Worker `w` of `T` holds indices `w, w+T, w+2T, …`,
/// so a client lives at slot `index / T` of a flat array: no hashing on the hot path.
struct ClientTable {
    private var slots: [SimulatedClient?] = []
    private let stride: Int

    init(stride: Int) { self.stride = max(stride, 1) }

    subscript(index: Int) -> SimulatedClient? {
        get {
            let slot = index / stride
            return slot < slots.count ? slots[slot] : nil
        }
        _modify {
            let slot = index / stride
            if slot >= slots.count { slots.append(contentsOf: repeatElement(nil, count: slot - slots.count + 1)) }
            yield &slots[slot]
        }
    }

    var all: [SimulatedClient] { slots.compactMap { $0 } }
}
