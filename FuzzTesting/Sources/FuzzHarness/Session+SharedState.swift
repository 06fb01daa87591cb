import MeridianCore

extension Session.Contents {
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
