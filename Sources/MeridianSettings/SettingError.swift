/// A setting refused: its message names the setting (key, flag or variable) and the reason.
public struct SettingError: Error, CustomStringConvertible, Equatable {
    /// The message: the setting (key, flag or variable) that was refused and why.
    public var description: String
    /// An error with `description` as its message, which names the setting and the reason.
    public init(_ description: String) { self.description = description }
}
