import MeridianCore
import MeridianStorage

/// Storage work on one session that later requests for the same session wait behind: a load
/// (the session is not in memory yet) or an HTTP API write (create, delete) in flight. It keeps
/// every request for a session in arrival order while the service thread goes on serving others.
struct SessionGate {
    enum Work {
        case loading, writing
        /// Room for the session is asked of the other hubs, one after the other: `asking` is
        /// the hub asked now, `next` those left to ask (see ``Hub/makeRoom(for:on:)``).
        case evicting(asking: Int, next: [Int])
    }
    var work: Work
    /// Run on the service thread, in arrival order, when the work is done.
    var waiters: [(GateOutcome) -> Void] = []
}

/// How a gate's work ended, as its waiters see it.
enum GateOutcome {
    /// The load found the session in storage; it is loaded now.
    case loaded
    /// The load found nothing stored (a join then creates the session).
    case absent
    /// The load failed.
    case failed(StorageError)
    /// An HTTP API write ended.
    case written
    /// Another hub unloaded an idle session: there is room now (the join tries again).
    case roomMade
    /// The server is full and no hub had an idle session to unload.
    case full(SessionError)
    /// Another node of the cluster owns the session (its lease is held there).
    case elsewhere
}
