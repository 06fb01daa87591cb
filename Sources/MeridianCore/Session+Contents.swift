extension Session {
    /// Everything the session holds, hidden participants and drag leases
    /// included, as one comparable value: a refused command must leave it unchanged.
    public struct Contents: Hashable, Sendable {
        /// The number of the last discrete event.
        public var seq: UInt64
        /// The session's settings: style, tint, drag policy, lease timeout and camera constraints.
        public var settings: SessionSettings
        /// Every annotation by id, at its live coordinate (also while dragged).
        public var annotations: [String: Annotation]
        /// Every participant by id, hidden ones included, with its presence.
        public var participants: [ParticipantID: Participant]
        /// The shared camera, or nil until someone moves it.
        public var sharedCamera: Camera?
        /// The participant holding the camera lease (who may move the shared camera), or nil.
        public var cameraLeaseHolder: ParticipantID?
        /// The shared callout shown, or nil.
        public var callout: Callout?
        /// The participant who showed the current callout.
        public var calloutShownBy: ParticipantID?
        /// Drags in progress, keyed by the id of the annotation dragged.
        public var drags: [String: DragGroup]
        /// The join counter behind assigned ids `p1`, `p2`, … (``Session/joinCount``).
        public var joinCount: Int
        /// Participant ids in join order, hidden ones included.
        public var joinOrder: [ParticipantID]
    }

    /// Everything the session holds now, as one value to compare before and after a command.
    public var contents: Contents {
        Contents(
            seq: seq, settings: settings, annotations: annotations, participants: participants,
            sharedCamera: sharedCamera, cameraLeaseHolder: cameraLeaseHolder, callout: callout,
            calloutShownBy: calloutShownBy, drags: drags, joinCount: joinCount, joinOrder: joinOrder)
    }
}
