import MeridianCore

extension SessionError.Code {
    /// A hidden join (a dashboard watching) named a session that does not exist:
    /// watching never creates a session. Retry later, or pick an existing session.
    public static let sessionNotFound = Self(rawValue: "session_not_found")
}
