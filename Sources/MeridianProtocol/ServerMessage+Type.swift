/// The type of an encoded server message, read back from its first bytes: every encoder here
/// starts a message with `{"type":"` and its type (SPEC §7), so a frame's type is known without
/// parsing it, for the counts of messages sent by type.
extension ServerMessage {
    /// Every server-to-client message type of Protocol v1, in the order of the schema's
    /// `serverMessage`; ``typeIndex(of:)`` answers a position in this list.
    public static let types = [
        "ack", "error", "welcome", "live", "participant.joined", "participant.left", "presence",
        "camera.begin", "camera.changing", "camera.end", "camera.lease", "follow",
        "annotation.added", "annotation.updated", "annotation.removed", "selection",
        "callout.shown", "callout.hidden", "callout.tapped", "drag", "map.load", "location", "settings",
        "overview", "drag.refused", "interest", "skipped", "moved", "clusters", "change.undone", "change.redone",
    ]

    /// The position in ``types`` of the message that `payload` (a whole message, or its first
    /// fragment) starts; nil when it does not start as the encoders start one.
    public static func typeIndex(of payload: UnsafeRawBufferPointer) -> Int? {
        let open = prefix.count
        guard payload.count > open, payload.prefix(open).elementsEqual(prefix) else { return nil }
        let name = payload[open...].prefix(longestType + 1)
        guard let end = name.firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        let length = end - open
        guard length < byLength.count else { return nil }
        for (bytes, index) in byLength[length] where payload[open..<end].elementsEqual(bytes) { return index }
        return nil
    }

    private static let prefix = Array(#"{"type":""#.utf8)
    private static let longestType = types.map(\.utf8.count).max()!
    /// The types' bytes and positions, grouped by their length: a lookup compares a handful.
    private static let byLength: [[(bytes: [UInt8], index: Int)]] = {
        var groups = Array(repeating: [([UInt8], Int)](), count: longestType + 1)
        for (index, type) in types.enumerated() { groups[type.utf8.count].append((Array(type.utf8), index)) }
        return groups.map { $0.map { (bytes: $0.0, index: $0.1) } }
    }()
}
