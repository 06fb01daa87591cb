import MeridianCore

/// One session's line in an `overview` message.
public struct OverviewEntry: Hashable, Sendable {
    /// Id of the session the entry describes.
    public var session: String
    /// The session's current seq: the number of its last discrete event.
    public var seq: UInt64
    /// Listed participants.
    public var participants: Int
    /// Hidden members: dashboards watching.
    public var dashboards: Int
    /// Annotations in the session.
    public var annotations: Int
    /// Drags in progress (starting or dragging).
    public var drags: Int
    /// Requests received per second from the session's members.
    public var messagesPerSecond: Double
    /// Frames queued per second for the session's members.
    public var deliveriesPerSecond: Double
    /// Names of the listed participants in join order, at most ``maxNames``.
    public var names: [String]
    /// When the session last emitted an event (ms since 1970), nil if not since it was loaded.
    public var lastActivityMs: Int64?
    /// In a cluster, the node that owns the session (its advertised address); nil on a single node.
    public var node: String?

    /// Most names an entry carries (`participants` has the full count).
    public static let maxNames = 20

    /// An entry with every count and rate given; `names`, `lastActivityMs` and `node` may be left out.
    public init(
        session: String, seq: UInt64, participants: Int, dashboards: Int, annotations: Int, drags: Int,
        messagesPerSecond: Double, deliveriesPerSecond: Double, names: [String] = [], lastActivityMs: Int64? = nil, node: String? = nil
    ) {
        self.node = node
        self.names = names
        self.lastActivityMs = lastActivityMs
        self.session = session
        self.seq = seq
        self.participants = participants
        self.dashboards = dashboards
        self.annotations = annotations
        self.drags = drags
        self.messagesPerSecond = messagesPerSecond
        self.deliveriesPerSecond = deliveriesPerSecond
    }
}

extension ServerMessage {
    /// The server-wide summary pushed to `overview.watch` subscribers.
    public static func overview(_ entries: [OverviewEntry], connections: Int) -> [UInt8] {
        message("overview", [
            ("connections", .number(Double(connections))),
            ("sessions", .array(entries.map { e in
                .object([
                    "session": .string(e.session), "seq": .number(Double(e.seq)),
                    "participants": .number(Double(e.participants)), "dashboards": .number(Double(e.dashboards)),
                    "annotations": .number(Double(e.annotations)), "drags": .number(Double(e.drags)),
                    "messagesPerSecond": .number(rounded(e.messagesPerSecond)),
                    "deliveriesPerSecond": .number(rounded(e.deliveriesPerSecond)),
                    "names": .array(e.names.prefix(OverviewEntry.maxNames).map(JSONValue.string)),
                    "lastActivity": e.lastActivityMs.map { .number(Double($0)) } ?? .null,
                ].merging(e.node.map { ["node": .string($0)] } ?? [:]) { a, _ in a })
            })),
        ])
    }

    /// The sessions and connections of an ``overview(_:connections:)`` message (another node's
    /// part of a cluster's overview); nil if the bytes are not one.
    public static func overviewEntries(_ bytes: [UInt8]) -> (entries: [OverviewEntry], connections: Int)? {
        guard let message = JSONValue.parse(bytes), case .object(let fields) = message, fields["type"] == .string("overview"),
              case .number(let connections)? = fields["connections"], case .array(let sessions)? = fields["sessions"]
        else { return nil }
        var entries: [OverviewEntry] = []
        for case .object(let s) in sessions {
            func number(_ key: String) -> Double? { if case .number(let n)? = s[key] { n } else { nil } }
            guard case .string(let id)? = s["session"], let seq = number("seq"), let participants = number("participants"),
                  let dashboards = number("dashboards"), let annotations = number("annotations"), let drags = number("drags"),
                  let messages = number("messagesPerSecond"), let deliveries = number("deliveriesPerSecond")
            else { return nil }
            var names: [String] = []
            if case .array(let list)? = s["names"] { for case .string(let name) in list { names.append(name) } }
            var entry = OverviewEntry(
                session: id, seq: UInt64(max(0, seq)), participants: Int(participants), dashboards: Int(dashboards),
                annotations: Int(annotations), drags: Int(drags), messagesPerSecond: messages, deliveriesPerSecond: deliveries,
                names: names, lastActivityMs: number("lastActivity").map { Int64($0) })
            if case .string(let node)? = s["node"] { entry.node = node }
            entries.append(entry)
        }
        return (entries, Int(connections))
    }

    /// Tells a session's hidden members (dashboards) that a participant's drag
    /// `starting` was refused because another participant holds the annotation.
    public static func dragRefused(seq: UInt64, annotation: String, participant: ParticipantID, holder: ParticipantID?) -> [UInt8] {
        message("drag.refused", [
            ("seq", .number(Double(seq))), ("transient", .bool(true)),
            ("id", .string(annotation)), ("participant", .string(participant)),
            ("holder", holder.map(JSONValue.string) ?? .null),
        ])
    }

    private static func rounded(_ x: Double) -> Double {
        x.isFinite ? (x * 10).rounded() / 10 : 0
    }
}
