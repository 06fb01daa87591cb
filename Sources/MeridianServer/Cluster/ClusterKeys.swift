/// The Redis keys and channels of a Meridian cluster. A session's keys carry its id as a hash
/// tag (`{…}`), so that a Redis Cluster keeps them on one shard and a script may use both.
enum ClusterKeys {
    /// The lease of the node that owns the session: `"NODE FENCE"`, with an expiry.
    static func lease(_ session: String) -> String { "meridian:{\(session)}:lease" }
    /// The session's fencing counter: one more for every new owner, never reset.
    static func fence(_ session: String) -> String { "meridian:{\(session)}:fence" }
    /// Hands out node numbers, one per node start.
    static let nodeCounter = "meridian:nodes"
    /// A node's liveness (its address), with an expiry that the node renews.
    static func node(_ number: Int) -> String { "meridian:node:\(number)" }
    /// Each node's part of the overview: field NODE, value its JSON. A part whose node's key
    /// (``node(_:)``) has expired is a dead node's: Redis's clock decides, never a node's.
    static let overview = "meridian:overview"
    /// The pub/sub channel of a session's frames, heard by every node with members in it.
    static func channel(_ session: String) -> String { "meridian:{\(session)}:frames" }
    static let channelPrefix = "meridian:{"
    /// The session of a ``channel(_:)``.
    static func session(ofChannel channel: String) -> String? {
        guard channel.hasPrefix(channelPrefix), channel.hasSuffix("}:frames") else { return nil }
        return String(channel.dropFirst(channelPrefix.count).dropLast("}:frames".count))
    }
    /// The pub/sub channel a node hears the messages for it on.
    static func inbox(_ number: Int) -> String { "meridian:inbox:\(number)" }
}
