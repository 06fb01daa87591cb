/// Counters for tests and metrics.
public struct TransportStats: Sendable, Equatable {
    /// Transient frames dropped because a newer frame with the same key superseded them.
    public var conflatedFrames: Int = 0
    /// Connections closed with 4008 for falling behind.
    public var slowConsumerCloses: Int = 0
    /// WebSocket connections currently open.
    public var openConnections: Int = 0

    public init() {}
}
