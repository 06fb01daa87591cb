import MeridianCore

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
}
