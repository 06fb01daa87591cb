import MeridianStorage

/// Bookkeeping of the hub for loading and unloading sessions: loads and API writes in flight,
/// idle sessions, lease fences (the writes themselves: ``SessionWrites``).
struct Durability {
    let slot: StorageSlot
    /// Sessions with a load or an HTTP API write in flight, and what waits for each.
    var gates: [String: SessionGate] = [:]
    /// Loads in flight: they count towards the loaded-sessions limit.
    var loads = 0
    /// The ticket of the next join to wait for a load.
    var nextLoadTicket: UInt64 = 1
    /// When each loaded session was first seen without members.
    var emptySince: [String: Duration] = [:]
    /// In a cluster, the fencing number of this node's lease on each session it loaded.
    var fences: [String: UInt64] = [:]

    /// Makes `waiter` run when `id`'s gate is done; false if there is none.
    mutating func wait(behind id: String, _ waiter: @escaping (GateOutcome) -> Void) -> Bool {
        guard gates[id] != nil else { return false }
        gates[id]!.waiters.append(waiter)
        return true
    }

    /// Ends `id`'s gate: its waiters, to run in arrival order (none when there was no gate).
    mutating func endGate(_ id: String) -> [(GateOutcome) -> Void] {
        gates.removeValue(forKey: id)?.waiters ?? []
    }

    /// A new session epoch: random, so that a restored or recreated session never repeats one.
    static func newEpoch() -> String {
        var rng = SystemRandomNumberGenerator()
        return String(rng.next() as UInt64, radix: 16)
    }
}
