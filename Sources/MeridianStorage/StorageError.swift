/// Why storage failed. The message names the file or operation and the cause.
public struct StorageError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Kind: Hashable, Sendable {
        case cannotOpen, writeFailed, readFailed, corrupt
        case fenced(session: String, stored: UInt64, offered: UInt64)
        case locked(session: String)
    }
    private let kind: Kind
    /// What failed and why, naming the file or operation (the error's ``description``).
    public let message: String

    private init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    /// The store could not be opened (missing permission, not a database, …).
    public static func cannotOpen(_ path: String, _ reason: String) -> StorageError {
        StorageError(.cannotOpen, "cannot open the session store at \(path): \(reason)")
    }
    /// A commit failed; none of its changes were applied.
    public static func writeFailed(_ reason: String) -> StorageError { StorageError(.writeFailed, "storage write failed: \(reason)") }
    /// A read could not be done: the store failed or did not answer, or the reader has stopped.
    public static func readFailed(_ reason: String) -> StorageError { StorageError(.readFailed, "storage read failed: \(reason)") }
    /// Stored data that cannot be decoded.
    public static func corrupt(_ reason: String) -> StorageError { StorageError(.corrupt, "stored data is corrupt: \(reason)") }
    /// A change to `session` came with fencing number `offered`, below the `stored` one: a newer
    /// owner has written the session since. None of the commit's changes were applied.
    public static func fenced(session: String, stored: UInt64, offered: UInt64) -> StorageError {
        StorageError(
            .fenced(session: session, stored: stored, offered: offered),
            "storage write fenced off: session \(session) is stored under fence \(stored), this change came with fence \(offered)")
    }

    /// A change to `session` waited too long for a lock another writer holds (in a cluster, a
    /// former owner stalled in the middle of a transaction). None of the commit's changes were
    /// applied; the store itself is working.
    public static func locked(session: String, _ reason: String) -> StorageError {
        StorageError(.locked(session: session), "storage write of session \(session) waited too long for another writer's lock: \(reason)")
    }

    /// True for a store that could not be opened (``cannotOpen(_:_:)``).
    public var isCannotOpen: Bool { kind == .cannotOpen }
    /// True for a failed write (``writeFailed(_:)``).
    public var isWriteFailure: Bool { kind == .writeFailed }
    /// True for a failed read (``readFailed(_:)``).
    public var isReadFailure: Bool { kind == .readFailed }
    /// A change refused for a stale fencing number (``fenced(session:stored:offered:)``).
    public var isFenced: Bool { fencedSession != nil }
    /// The session whose change was fenced off, nil for every other failure.
    public var fencedSession: String? {
        if case .fenced(let session, _, _) = kind { return session }
        return nil
    }
    /// The one session a failure is about (fenced off, or locked by another writer): a batch
    /// committed again without that session's changes may succeed. Nil for a failure of the store.
    public var session: String? {
        switch kind {
        case .fenced(let session, _, _), .locked(let session): session
        default: nil
        }
    }

    /// The ``message``.
    public var description: String { message }
}
