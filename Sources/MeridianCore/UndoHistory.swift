/// One change a participant made to one annotation, as undo and redo see it: the annotation
/// before and after (nil where it did not exist). Reverting the step sets the content of
/// `before` again, as a new change; it is allowed only while the last change of the annotation
/// is still the step's (its revision, or for a removal the seq it was removed at, is `at`), so
/// an undo never reverts a change someone else made.
public struct UndoStep: Hashable, Sendable {
    /// What kind of change the step was, by the request that made it.
    public enum Change: String, Hashable, Sendable, CaseIterable {
        /// The annotation was added (`annotation.add`).
        case add = "annotation.add"
        /// The annotation's fields were changed (`annotation.update`).
        case update = "annotation.update"
        /// The annotation was removed (`annotation.remove`).
        case remove = "annotation.remove"
        /// A drag of the annotation ended, committing a new coordinate.
        case drag = "drag"
    }

    /// The kind of change the step records.
    public var change: Change
    /// The id of the annotation changed.
    public var annotation: String
    /// The annotation before the change (committed form); nil: the change added it.
    public var before: Annotation?
    /// The annotation after the change; nil: the change removed it.
    public var after: Annotation?
    /// The seq of the change: `after`'s revision, or the seq of the `annotation.removed` event.
    public var at: UInt64
    /// The same of the state before: `before`'s revision, or the seq it had been removed at (0:
    /// it never existed). Reverting the step brings that state back under a new seq, and the
    /// participant's steps that left the annotation in it follow (their `at` becomes the new seq).
    public var beforeAt: UInt64

    /// Builds a step from the annotation before and after a change and the seqs of both states.
    public init(change: Change, annotation: String, before: Annotation?, after: Annotation?, at: UInt64, beforeAt: UInt64) {
        self.change = change
        self.annotation = annotation
        self.before = before
        self.after = after
        self.at = at
        self.beforeAt = beforeAt
    }
}

/// A participant's own changes that `undo` and `redo` can revert, newest last, each bounded
/// by ``SessionLimits/maxUndoSteps``. A new change of the participant empties `redo`.
public struct UndoHistory: Hashable, Sendable {
    /// Steps `undo` can revert, newest last.
    public var undo: [UndoStep]
    /// Undone steps `redo` can make again, newest last; a new change empties it.
    public var redo: [UndoStep]
    /// The seq of the history's last change: of the histories of participants no longer in the
    /// session, the one changed longest ago goes first when there are too many.
    public var lastChange: UInt64

    /// Builds a history; empty by default.
    public init(undo: [UndoStep] = [], redo: [UndoStep] = [], lastChange: UInt64 = 0) {
        self.undo = undo
        self.redo = redo
        self.lastChange = lastChange
    }

    /// True when there is nothing to undo or redo.
    public var isEmpty: Bool { undo.isEmpty && redo.isEmpty }
}

/// What an `undo` or `redo` reverted, announced before the change it makes.
public struct UndoMark: Hashable, Sendable {
    /// The participant whose step was undone or redone.
    public var participant: ParticipantID
    /// The id of the annotation the step changed.
    public var annotation: String
    /// The kind of the change reverted (for `redo`: the change made again).
    public var change: UndoStep.Change
    /// True for `redo`.
    public var redo: Bool

    /// Builds a mark naming who reverted which annotation's change, and whether it was a redo.
    public init(participant: ParticipantID, annotation: String, change: UndoStep.Change, redo: Bool) {
        self.participant = participant
        self.annotation = annotation
        self.change = change
        self.redo = redo
    }
}
