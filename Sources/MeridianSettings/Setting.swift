import Configuration

/// One setting of `meridian serve`, declared once (in `ServeSettings`): its key,
/// type, default, help and check. The config-file key is `key`; the flag, the
/// environment variable and the resolved value all derive from it.
public struct Setting<Value: SettingValue>: Sendable {
    /// The config-file key, in camel case (`maxSessions`); the flag and the environment variable derive from it.
    public let key: String
    /// The value when no layer gives one; its type is the setting's type (nil: an optional setting unset by default).
    public let defaultValue: Value
    /// The sentence `meridian serve --help` shows for the setting.
    public let help: String
    let check: Check<Value>?

    /// Declares a setting from its key, its default (whose type becomes the setting's), its help text
    /// and the check its resolved value must pass, if any.
    public init(_ key: String, _ defaultValue: Value, _ help: String, _ check: Check<Value>? = nil) {
        self.key = key
        self.defaultValue = defaultValue
        self.help = help
        self.check = check
    }
}

/// A setting of any type, as the table of `ServeSettings` lists it.
public protocol AnySetting: Sendable {
    /// The key of the config file: `maxSessions`.
    var key: String { get }
    /// The setting's description in `--help`.
    var help: String { get }
    /// The flag's value in `--help`: "<integer>".
    var placeholder: String { get }
    /// The default in `--help`; nil when the setting is unset by default.
    var defaultDisplay: String? { get }
}

extension AnySetting {
    /// `maxConnectionsPerIp` → `--max-connections-per-ip`.
    public var flag: String { "--" + Self.words(key).joined(separator: "-").lowercased() }

    /// `maxConnectionsPerIp` → `MERIDIAN_MAX_CONNECTIONS_PER_IP`: the name swift-configuration's
    /// `EnvironmentVariablesProvider` reads for the key under the prefix `meridian`.
    public var environmentVariable: String { "MERIDIAN_" + Self.words(key).joined(separator: "_").uppercased() }

    /// Words of a camel-case key, split where a lowercase letter meets an uppercase one.
    static func words(_ key: String) -> [String] {
        var words: [String] = [""]
        var previous: Character?
        for c in key {
            if let p = previous, p.isLowercase, c.isUppercase { words.append("") }
            words[words.count - 1].append(c)
            previous = c
        }
        return words
    }
}

extension Setting: AnySetting {
    /// The flag's value in `--help`, by the value's type: "<integer>", "<list>".
    public var placeholder: String { Value.placeholder }
    /// The default as `--help` shows it ("10000", "none" for an empty list); nil when unset by default.
    public var defaultDisplay: String? { defaultValue.display }
}

/// What layering needs of a setting, whatever its type.
protocol LayeredSetting: AnySetting {
    var configType: ConfigType { get }
    /// The values its check allows, when they are few.
    var choices: [String] { get }
    var defaultContent: ConfigContent? { get }
    /// The provider's content for the texts given after the flag.
    func flagContent(_ texts: [String]) throws -> ConfigContent
    /// The value of the highest layer that has one, else the default; checked.
    func read(from reader: ConfigReader, layers: [SettingLayer]) async throws -> any SettingValue
}

extension Setting: LayeredSetting {
    var configType: ConfigType { Value.configType }
    var choices: [String] { check?.choices ?? [] }
    var defaultContent: ConfigContent? { defaultValue.content }

    func flagContent(_ texts: [String]) throws -> ConfigContent {
        guard let content = Value(flags: texts)?.content else { throw SettingError("\(flag) \(texts.last ?? ""): not \(Value.kind)") }
        return content
    }

    func read(from reader: ConfigReader, layers: [SettingLayer]) async throws -> any SettingValue {
        let value: Value
        do {
            value = try await Value.fetch(key, from: reader) ?? defaultValue
        } catch {
            // The reader stops at the first layer that has the key: that layer's value is the bad one.
            let origin = layers.first { $0.holds(self) }?.origin(self) ?? key
            throw SettingError("\(origin): not \(Value.kind)")
        }
        if let refusal = check?.refusal(of: value, key: key) { throw SettingError(refusal) }
        return value
    }
}
