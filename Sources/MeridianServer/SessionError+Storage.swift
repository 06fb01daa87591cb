import MeridianCore

extension SessionError.Code {
    /// The change could not be made durable; it may be lost. Retry later.
    public static let storageUnavailable = Self(rawValue: "storage_unavailable")
    /// The server holds as many sessions as it may and none can be unloaded.
    public static let capacityExceeded = Self(rawValue: "capacity_exceeded")
}
