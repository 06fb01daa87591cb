import MeridianCore

/// One session's line in an `overview` message.
public struct OverviewEntry: Hashable, Sendable {
    public var session: String
    public var seq: UInt64
    /// Listed participants.
    public var participants: Int
    /// Hidden members: dashboards watching.
    public var dashboards: Int
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

    /// Most names an entry carries (`participants` has the full count).
    public static let maxNames = 20

    public init(
        session: String, seq: UInt64, participants: Int, dashboards: Int, annotations: Int, drags: Int,
        messagesPerSecond: Double, deliveriesPerSecond: Double, names: [String] = [], lastActivityMs: Int64? = nil
    ) {
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
                ])
            })),
        ])
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
