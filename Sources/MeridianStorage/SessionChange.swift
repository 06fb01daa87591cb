import MeridianCore

/// One durable change to one session, as the server commits it.
public enum SessionChange: Hashable, Sendable {
    /// Writes the session's header (settings, callout, seq, epoch), creating
    /// the session if needed, then its changed annotations.
    case update(SessionUpdate)
    /// Removes the session and its annotations.
    case delete(id: String)

    public var sessionID: String {
        switch self {
        case .update(let u): u.id
        case .delete(let id): id
        }
    }
}

public struct SessionUpdate: Hashable, Sendable {
    public var id: String
    public var epoch: String
    public var seq: UInt64
    public var settings: SessionSettings
    public var callout: Callout?
    /// Annotations in committed form, inserted or replaced.
    public var upserted: [Annotation]
    public var removed: [String]
    /// True: every stored annotation not in `upserted` is removed first (a whole record).
    public var replacesAnnotations: Bool

    public init(
        id: String, epoch: String, seq: UInt64, settings: SessionSettings, callout: Callout?,
        upserted: [Annotation] = [], removed: [String] = [], replacesAnnotations: Bool = false
    ) {
        self.id = id
        self.epoch = epoch
        self.seq = seq
        self.settings = settings
        self.callout = callout
        self.upserted = upserted
        self.removed = removed
        self.replacesAnnotations = replacesAnnotations
    }

    /// The whole record, replacing whatever was stored.
    public init(record: SessionRecord, epoch: String) {
        self.init(id: record.id, epoch: epoch, seq: record.seq, settings: record.settings, callout: record.callout,
                  upserted: record.annotations, replacesAnnotations: true)
    }
}
