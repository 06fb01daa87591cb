/// Annotation revisions and conditional writes.
///
/// An annotation's revision is the seq of the discrete event that last changed it, so it costs
/// no counter of its own: the session stamps it just before emitting that event. A request
/// with `ifRevision` is applied only while the annotation is still at that revision, so a
/// client replaying an edit made offline cannot overwrite a change it never saw.
extension Session {
    /// The revision an annotation changed by the next discrete event gets: that event's seq.
    var nextRevision: UInt64 { seq + 1 }

    /// Refuses a conditional write whose `ifRevision` is not the annotation's revision.
    func requireRevision(_ expected: UInt64?, of a: Annotation, for request: String) throws(SessionError) {
        guard let expected, expected != a.revision else { return }
        throw SessionError.revisionConflict(request, a, expected: expected)
    }
}
