import MeridianCore
import MeridianStorage
import MeridianTransport

/// A session restored from storage, with its annotation index when it is large.
struct LoadedSession: Sendable {
    var session: Session
    var index: SpatialIndex<String>?
}

/// What a load found: the stored session (nil: none) and, in a cluster, the fencing number of
/// this node's lease on it; or that another node owns it.
enum LoadResult: Sendable {
    case read(LoadedSession?, fence: UInt64?)
    case elsewhere

    /// The read of a load of `id` on a reader thread, for hub `hub`: in a cluster the node takes
    /// the session's lease first (nothing if another node holds it) and claims its fence in the
    /// store; a stored session is restored (`epoch`, `limits`) with its annotation index when
    /// it is large, work the service thread need not do.
    static func load(_ id: String, cluster: ClusterNode?, hub: Int, epoch: String, limits: SessionLimits)
        -> @Sendable (any SessionStore) throws(StorageError) -> LoadResult
    {
        { store throws(StorageError) -> LoadResult in
            // In a cluster, the session is this node's only with its lease (taken here, before
            // it is read, so that its owner's last commit is in the store).
            var lease: Lease?
            if let cluster {
                guard let taken = try cluster.acquire(id, hub: hub) else { return .elsewhere }
                lease = taken
            }
            // The lease's fence is stored as the session is read: a former owner's commit still
            // in flight is read now or refused later, never stored behind this owner's back.
            var stored: StoredSession?
            if let taken = lease { stored = try store.load(id, claiming: taken.fence) } else { stored = try store.load(id) }
            if let cluster, let taken = lease {
                // Fences only grow: a counter Redis lost is moved past the one stored before the
                // claim, and claimed.
                guard let settled = try cluster.settle(id, taken, stored: stored?.fence ?? 0) else { return .elsewhere }
                if settled != taken { stored = try store.load(id, claiming: settled.fence) }
                lease = settled
            }
            let fence = lease?.fence
            // The session is built here too, and a large one's annotation index: restoring a large
            // session is work the loop need not do.
            let loaded = stored.map { stored in
                let session = Session(restoring: stored.record, epoch: epoch, limits: limits)
                let index = session.annotations.count >= SessionHost.indexAbove
                    ? InterestRouter<ConnectionID>.annotationIndex(of: session) : nil
                return LoadedSession(session: session, index: index)
            }
            return .read(loaded, fence: fence)
        }
    }
}
