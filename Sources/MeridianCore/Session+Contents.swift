extension Session {
    /// Everything the session holds, hidden participants and drag leases
    /// included, as one comparable value: a refused command must leave it unchanged.
    public struct Contents: Hashable, Sendable {
        public var seq: UInt64
        public var settings: SessionSettings
        public var annotations: [String: Annotation]
        public var participants: [ParticipantID: Participant]
        public var sharedCamera: Camera?
        public var cameraLeaseHolder: ParticipantID?
        public var callout: Callout?
        public var calloutShownBy: ParticipantID?
        public var drags: [String: DragGroup]
        public var joinCount: Int
        public var joinOrder: [ParticipantID]
    }

    public var contents: Contents {
        Contents(
            seq: seq, settings: settings, annotations: annotations, participants: participants,
            sharedCamera: sharedCamera, cameraLeaseHolder: cameraLeaseHolder, callout: callout,
            calloutShownBy: calloutShownBy, drags: drags, joinCount: joinCount, joinOrder: joinOrder)
    }
}
