/// Why storage failed. The message names the file or operation and the cause.
public struct StorageError: Error, Hashable, Sendable, CustomStringConvertible {
    private enum Kind: Hashable, Sendable { case cannotOpen, writeFailed, readFailed, corrupt }
    private let kind: Kind
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
    public static func readFailed(_ reason: String) -> StorageError { StorageError(.readFailed, "storage read failed: \(reason)") }
    /// Stored data that cannot be decoded.
    public static func corrupt(_ reason: String) -> StorageError { StorageError(.corrupt, "stored data is corrupt: \(reason)") }

    public var isCannotOpen: Bool { kind == .cannotOpen }
    public var isWriteFailure: Bool { kind == .writeFailed }

    public var description: String { message }
}
