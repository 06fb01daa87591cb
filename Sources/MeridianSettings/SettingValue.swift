import Configuration
import Foundation

/// A type a setting's value can have: how it is written after its flag and in
/// JSON, and which typed lookup of a `ConfigReader` reads it from the layers.
public protocol SettingValue: Sendable, Equatable {
    /// How a refusal names the type: "an integer".
    static var kind: String { get }
    /// The flag's value in `--help`: "<integer>".
    static var placeholder: String { get }
    /// The type the providers are asked for.
    static var configType: ConfigType { get }
    /// The value given by every occurrence of its flag, in order; nil when the text is not one.
    init?(flags texts: [String])
    /// The value as a provider holds it; nil for an unset optional.
    var content: ConfigContent? { get }
    /// The value of the highest layer of `reader` that has one; nil when none has.
    /// Throws when that layer's value is not of this type.
    static func fetch(_ key: String, from reader: ConfigReader) async throws -> Self?
    /// The value in `--print-config` JSON.
    var json: Any { get }
    /// The value in `--help`: "10000"; nil for an unset optional.
    var display: String? { get }
}

/// A value a layer holds that is not of the setting's type.
struct NotOfType: Error {}

extension SettingValue where Self: LosslessStringConvertible {
    /// The last occurrence of the flag wins, as with any option given twice.
    public init?(flags texts: [String]) {
        guard let last = texts.last else { return nil }
        self.init(last)
    }
    /// The value itself, which `JSONSerialization` writes as a JSON number or string.
    public var json: Any { self }
    /// Its `description`: "10000", "info".
    public var display: String? { description }
}

extension Int: SettingValue {
    /// "an integer": how a refusal names the type.
    public static var kind: String { "an integer" }
    /// "<integer>": an integer setting's flag value in `--help`.
    public static var placeholder: String { "<integer>" }
    /// Providers are asked for an integer.
    public static var configType: ConfigType { .int }
    /// The integer as a provider's `.int` content.
    public var content: ConfigContent? { .int(self) }
    /// The integer under `key` in the highest layer of `reader` that has one; nil when none has.
    /// Throws when that layer's value is not an integer.
    public static func fetch(_ key: String, from reader: ConfigReader) async throws -> Int? {
        try await reader.fetchInt(forKey: ConfigKey([key]))
    }
}

extension Double: SettingValue {
    /// "a number": how a refusal names the type.
    public static var kind: String { "a number" }
    /// "<number>": a number setting's flag value in `--help`.
    public static var placeholder: String { "<number>" }
    /// Providers are asked for a double.
    public static var configType: ConfigType { .double }
    /// The last occurrence of the flag as a finite number; nil when it is not one (infinities and NaN included).
    public init?(flags texts: [String]) {
        guard let last = texts.last, let value = Double(last), value.isFinite else { return nil }
        self = value
    }
    /// The number as a provider's `.double` content.
    public var content: ConfigContent? { .double(self) }
    /// The number under `key` in the highest layer of `reader` that has one; nil when none has.
    /// Throws when that layer's value is not a number or not finite.
    public static func fetch(_ key: String, from reader: ConfigReader) async throws -> Double? {
        guard let value = try await reader.fetchDouble(forKey: ConfigKey([key])) else { return nil }
        // Seconds become durations by multiplication: an infinity would trap there.
        guard value.isFinite else { throw NotOfType() }
        return value
    }
    /// A whole number without a fraction ("300" for 300.0), any other as its `description` ("0.5").
    public var display: String? { rounded() == self && abs(self) < 1e15 ? String(Int(self)) : description }
}

extension String: SettingValue {
    /// "a string": how a refusal names the type.
    public static var kind: String { "a string" }
    /// "<text>": a string setting's flag value in `--help`.
    public static var placeholder: String { "<text>" }
    /// Providers are asked for a string.
    public static var configType: ConfigType { .string }
    /// The text as a provider's `.string` content.
    public var content: ConfigContent? { .string(self) }
    /// The text under `key` in the highest layer of `reader` that has one; nil when none has.
    /// Throws when that layer's value is not a string.
    public static func fetch(_ key: String, from reader: ConfigReader) async throws -> String? {
        try await reader.fetchString(forKey: ConfigKey([key]))
    }
}

/// A list: each occurrence of the flag adds to it, and a flag's value or a
/// variable's may hold several items separated by commas.
extension [String]: SettingValue {
    /// "a list of strings": how a refusal names the type.
    public static var kind: String { "a list of strings" }
    /// "<list>": a list setting's flag value in `--help`.
    public static var placeholder: String { "<list>" }
    /// Providers are asked for an array of strings.
    public static var configType: ConfigType { .stringArray }
    /// The items of every occurrence of the flag, in order, each split at commas, trimmed of
    /// blanks and with empty items dropped; never nil.
    public init?(flags texts: [String]) {
        self = texts.flatMap(Self.commaSeparated)
    }
    /// The items as a provider's `.stringArray` content.
    public var content: ConfigContent? { .stringArray(self) }
    /// The items under `key` in the highest layer of `reader` that has them, empty items dropped;
    /// nil when no layer has the key. Throws when that layer's value is not a list of strings.
    public static func fetch(_ key: String, from reader: ConfigReader) async throws -> [String]? {
        // "a, ,b" in a variable is ["a", "", "b"] to the provider: empty items are dropped.
        try await reader.fetchStringArray(forKey: ConfigKey([key]))?.filter { !$0.isEmpty }
    }
    /// The items, which `JSONSerialization` writes as an array of strings.
    public var json: Any { self }
    /// The items joined by commas; "none" when the list is empty.
    public var display: String? { isEmpty ? "none" : joined(separator: ",") }

    /// "a, b,,c" → ["a", "b", "c"].
    static func commaSeparated(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

/// A setting with no default: unset unless a layer gives it.
extension Optional: SettingValue where Wrapped: SettingValue {
    /// The wrapped type's name ("a string"): what a given value must be.
    public static var kind: String { Wrapped.kind }
    /// The wrapped type's flag value in `--help` ("<text>").
    public static var placeholder: String { Wrapped.placeholder }
    /// Providers are asked for the wrapped type: a layer holds only set values.
    public static var configType: ConfigType { Wrapped.configType }
    /// The wrapped value the flag gives, always set; nil when the text is not one.
    public init?(flags texts: [String]) {
        guard let value = Wrapped(flags: texts) else { return nil }
        self = .some(value)
    }
    /// The wrapped value's content; nil when unset, so a layer holds nothing for the setting.
    public var content: ConfigContent? { self?.content }
    /// The wrapped value of the highest layer of `reader` that has one, as `.some`; nil when none has.
    /// Throws when that layer's value is not of the wrapped type.
    public static func fetch(_ key: String, from reader: ConfigReader) async throws -> Wrapped?? {
        try await Wrapped.fetch(key, from: reader).map(Optional.some)
    }
    /// The wrapped value's JSON; `null` when unset.
    public var json: Any { self?.json ?? NSNull() }
    /// The wrapped value as `--help` shows it; nil when unset.
    public var display: String? { self?.display }
}
