import MeridianCore

/// Everything a session holds, compared as a whole: `Session` itself is not
/// `Equatable`, but each part of its public state is.
struct SessionSnapshot: Equatable {
    var seq: UInt64
    var settings: SessionSettings
    var annotations: [String: Annotation]
    var participants: [ParticipantID: Participant]
    var sharedCamera: Camera?
    var cameraLeaseHolder: ParticipantID?
    var callout: Callout?
    var calloutShownBy: ParticipantID?
    var drags: [String: DragGroup]
    var joinCount: Int

    init(_ s: Session) {
        seq = s.seq
        settings = s.settings
        annotations = s.annotations
        participants = s.participants
        sharedCamera = s.sharedCamera
        cameraLeaseHolder = s.cameraLeaseHolder
        callout = s.callout
        calloutShownBy = s.calloutShownBy
        drags = s.drags
        joinCount = s.joinCount
    }

    /// What only editors and owners may change: a viewer's command leaves it as it was.
    var shared: SharedState {
        SharedState(
            settings: settings, annotations: annotations, sharedCamera: sharedCamera,
            cameraLeaseHolder: cameraLeaseHolder, callout: callout, drags: drags)
    }

    struct SharedState: Equatable {
        var settings: SessionSettings
        var annotations: [String: Annotation]
        var sharedCamera: Camera?
        var cameraLeaseHolder: ParticipantID?
        var callout: Callout?
        var drags: [String: DragGroup]
    }
}
