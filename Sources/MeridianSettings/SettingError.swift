/// A setting refused: its message names the setting (key, flag or variable) and the reason.
public struct SettingError: Error, CustomStringConvertible, Equatable {
    public var description: String
    public init(_ description: String) { self.description = description }
}
