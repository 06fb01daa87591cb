import MeridianStorage

/// What an HTTP API create or delete of a session not loaded here found, on a reader thread.
enum UnloadedWrite: Sendable {
    /// Whether it is stored, and in a cluster the fence of the lease this node took on it for
    /// the write (given up after it).
    case read(Bool, fence: UInt64?)
    /// Another node of the cluster holds it.
    case elsewhere

    /// The read before an HTTP API create or delete of `id`, which is not loaded here, for hub
    /// `hub`. In a cluster the node takes the session's lease first, as a load does, and claims
    /// its fence in the store: the write is fenced like an owner's, and a former owner's late
    /// write cannot undo it; a session another node holds is not written here.
    static func lookup(_ id: String, cluster: ClusterNode?, hub: Int) -> @Sendable (any SessionStore) throws(StorageError) -> UnloadedWrite {
        { store throws(StorageError) in
            guard let cluster else { return .read(try store.contains(id), fence: nil) }
            guard let lease = try cluster.acquire(id, hub: hub) else { return .elsewhere }
            let stored = try store.load(id, claiming: lease.fence)
            guard let settled = try cluster.settle(id, lease, stored: stored?.fence ?? 0) else { return .elsewhere }
            if settled != lease { _ = try store.load(id, claiming: settled.fence) }
            return .read(stored != nil, fence: settled.fence)
        }
    }
}
