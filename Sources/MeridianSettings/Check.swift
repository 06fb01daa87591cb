/// A rule a setting's value must keep, and the reason a refusal gives, naming the setting.
public struct Check<Value: SettingValue>: Sendable {
    let accepts: @Sendable (Value) -> Bool
    let refusal: @Sendable (_ key: String, _ value: Value) -> String
    /// The values allowed, for `--help`, when they are few.
    var choices: [String] = []

    /// The refusal of `value`, nil when it is accepted.
    func refusal(of value: Value, key: String) -> String? {
        accepts(value) ? nil : refusal(key, value)
    }
}

extension Check where Value: Comparable {
    /// "`key` must be at least 1 s"; `note` follows in parentheses.
    public static func atLeast(_ least: Value, _ unit: String = "", note: String? = nil) -> Check {
        Check(accepts: { $0 >= least }) { key, _ in "\(key) must be at least \(least.display ?? "")\(unit)\(note.map { " (\($0))" } ?? "")" }
    }

    /// "`key` must be within 0...65535".
    public static func within(_ range: ClosedRange<Value>) -> Check {
        Check(accepts: { range.contains($0) }) { key, _ in
            "\(key) must be within \(range.lowerBound.display ?? "")...\(range.upperBound.display ?? "")"
        }
    }
}

extension Check where Value: Comparable & AdditiveArithmetic {
    /// "`key` must not be negative"; `note` follows in parentheses.
    public static func notNegative(note: String? = nil) -> Check {
        Check(accepts: { $0 >= .zero }) { key, _ in "\(key) must not be negative\(note.map { " (\($0))" } ?? "")" }
    }

    /// "`key` must be positive".
    public static var positive: Check {
        Check(accepts: { $0 > .zero }) { key, _ in "\(key) must be positive" }
    }
}

extension Check where Value == String {
    /// `key "whoever": use exclusive, priority or last-writer-wins`.
    public static func oneOf(_ choices: String...) -> Check {
        let listed = choices.dropLast().joined(separator: ", ") + " or " + choices.last!
        return Check(accepts: { choices.contains($0) }, refusal: { key, value in "\(key) \"\(value)\": use \(listed)" }, choices: choices)
    }
}
