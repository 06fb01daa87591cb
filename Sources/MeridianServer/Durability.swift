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
}
