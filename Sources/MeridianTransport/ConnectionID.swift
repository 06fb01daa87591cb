/// Identifies one WebSocket connection for the lifetime of a server. Never reused; 0 means "none".
///
/// Its 64 bits, high to low:
///
/// - 63–56: the **tag** of the server that gave it out (``TransportConfiguration/connectionTag``),
///   so that the ids of the servers of one process never meet. Meridian tags each hub's server
///   with the hub's index, and routes a connection's frames to the hub its tag names.
/// - 55–32: the **generation** of its slot (never 0), which changes whenever the slot is reused,
///   so that a stale id finds nothing.
/// - 31–0: its **slot** in the server's table of connections: a lookup is an index and a compare.
///
/// Ids made outside a transport (the cluster gateway's aliases for other nodes' members, test
/// connections) keep the tag and number the rest themselves: ``init(tag:serial:)``.
///
/// Logs, metrics and the cluster wire carry the ``rawValue`` (decimal in text, as
/// ``description`` prints it); ids order as their raw values do.
@frozen
public struct ConnectionID: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// All 64 bits, as logged and sent between nodes.
    public let rawValue: UInt64

    @inlinable
    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// The id of the connection in `slot`, in that slot's `generation`, of the server tagged `tag`.
    init(tag: UInt8, generation: UInt32, slot: UInt32) {
        rawValue = UInt64(tag) << Self.tagShift | UInt64(generation & Self.generationMask) << Self.generationShift | UInt64(slot)
    }

    /// An id for the server tagged `tag` made outside a transport: `serial` (below 2⁵⁶, unique
    /// for the tag) takes the place of the generation and slot.
    @inlinable
    public init(tag: UInt8, serial: UInt64) {
        precondition(serial >> Self.tagShift == 0, "a serial takes 56 bits at most")
        rawValue = UInt64(tag) << Self.tagShift | serial
    }

    /// The tag of the server that gave it out (for Meridian, the index of its hub).
    @inlinable
    public var tag: UInt8 { UInt8(truncatingIfNeeded: rawValue >> Self.tagShift) }

    /// Its slot in the server's table of connections.
    var slot: Int { Int(truncatingIfNeeded: rawValue & 0xFFFF_FFFF) }

    /// The generation a slot takes when it is reused after `generation`: it wraps within its 24
    /// bits, skipping 0 (which would allow the id 0, "none", in slot 0 of the server tagged 0).
    static func generation(after generation: UInt32) -> UInt32 {
        let next = (generation &+ 1) & generationMask
        return next == 0 ? 1 : next
    }

    @inlinable static var tagShift: UInt64 { 56 }
    static var generationShift: UInt64 { 32 }
    static var generationMask: UInt32 { 0xFF_FFFF }

    public var description: String { String(rawValue) }

    @inlinable
    public static func == (a: ConnectionID, b: ConnectionID) -> Bool { a.rawValue == b.rawValue }

    @inlinable
    public static func < (a: ConnectionID, b: ConnectionID) -> Bool { a.rawValue < b.rawValue }

    @inlinable
    public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }
}
