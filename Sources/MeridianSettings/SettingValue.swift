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
    public var json: Any { self }
    public var display: String? { description }
}

extension Int: SettingValue {
    public static var kind: String { "an integer" }
    public static var placeholder: String { "<integer>" }
    public static var configType: ConfigType { .int }
    public var content: ConfigContent? { .int(self) }
    public static func fetch(_ key: String, from reader: ConfigReader) async throws -> Int? {
        try await reader.fetchInt(forKey: ConfigKey([key]))
    }
}

extension Double: SettingValue {
    public static var kind: String { "a number" }
    public static var placeholder: String { "<number>" }
    public static var configType: ConfigType { .double }
    public init?(flags texts: [String]) {
        guard let last = texts.last, let value = Double(last), value.isFinite else { return nil }
        self = value
    }
    public var content: ConfigContent? { .double(self) }
    public static func fetch(_ key: String, from reader: ConfigReader) async throws -> Double? {
        guard let value = try await reader.fetchDouble(forKey: ConfigKey([key])) else { return nil }
        // Seconds become durations by multiplication: an infinity would trap there.
        guard value.isFinite else { throw NotOfType() }
        return value
    }
    public var display: String? { rounded() == self && abs(self) < 1e15 ? String(Int(self)) : description }
}

extension String: SettingValue {
    public static var kind: String { "a string" }
    public static var placeholder: String { "<text>" }
    public static var configType: ConfigType { .string }
    public var content: ConfigContent? { .string(self) }
    public static func fetch(_ key: String, from reader: ConfigReader) async throws -> String? {
        try await reader.fetchString(forKey: ConfigKey([key]))
    }
}

/// A list: each occurrence of the flag adds to it, and a flag's value or a
/// variable's may hold several items separated by commas.
extension [String]: SettingValue {
    public static var kind: String { "a list of strings" }
    public static var placeholder: String { "<list>" }
    public static var configType: ConfigType { .stringArray }
    public init?(flags texts: [String]) {
        self = texts.flatMap(Self.commaSeparated)
    }
    public var content: ConfigContent? { .stringArray(self) }
    public static func fetch(_ key: String, from reader: ConfigReader) async throws -> [String]? {
        // "a, ,b" in a variable is ["a", "", "b"] to the provider: empty items are dropped.
        try await reader.fetchStringArray(forKey: ConfigKey([key]))?.filter { !$0.isEmpty }
    }
    public var json: Any { self }
    public var display: String? { isEmpty ? "none" : joined(separator: ",") }

    /// "a, b,,c" → ["a", "b", "c"].
    static func commaSeparated(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }
}

/// A setting with no default: unset unless a layer gives it.
extension Optional: SettingValue where Wrapped: SettingValue {
    public static var kind: String { Wrapped.kind }
    public static var placeholder: String { Wrapped.placeholder }
    public static var configType: ConfigType { Wrapped.configType }
    public init?(flags texts: [String]) {
        guard let value = Wrapped(flags: texts) else { return nil }
        self = .some(value)
    }
    public var content: ConfigContent? { self?.content }
    public static func fetch(_ key: String, from reader: ConfigReader) async throws -> Wrapped?? {
        try await Wrapped.fetch(key, from: reader).map(Optional.some)
    }
    public var json: Any { self?.json ?? NSNull() }
    public var display: String? { self?.display }
}
