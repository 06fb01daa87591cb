import Configuration

/// The value of every declared setting once its layers are read: flags over
/// `MERIDIAN_*` environment variables over the config file over the defaults.
/// Each value has passed its declared check; `effective.maxSessions` is an `Int`.
@dynamicMemberLookup
public struct EffectiveSettings: Sendable {
    let values: [String: any SettingValue]

    /// The resolved value of the setting at `path` in ``ServeSettings``, of its declared type
    /// (`effective.port` is an `Int`); the setting's default when it was not resolved.
    public subscript<Value>(dynamicMember path: KeyPath<ServeSettings, Setting<Value>>) -> Value {
        let setting = ServeSettings.declared[keyPath: path]
        // `resolve` stores each setting's own `Value` under its key (`nil` of an optional included).
        guard let value = values[setting.key] else { return setting.defaultValue }
        return value as! Value
    }

    /// Refuses an unknown setting flag, a missing value or one not of the setting's type,
    /// before anything else is read.
    public static func checkFlags(_ arguments: [String]) throws {
        _ = try SettingLayer.flags(arguments)
    }

    /// Reads every declared setting through one swift-configuration `ConfigReader` over the layers.
    /// - Parameters:
    ///   - arguments: The setting flags of the command line (`--port`, `8080`, `--log-level=debug`).
    ///   - environment: The process environment; only the declared `MERIDIAN_*` names are read.
    ///   - configFile: The path of a JSON config file, if any.
    /// - Throws: `SettingError` naming the setting (as key, flag or variable) and the reason.
    public static func resolve(
        arguments: [String], environment: [String: String], configFile: String?
    ) async throws -> EffectiveSettings {
        var layers = [try SettingLayer.flags(arguments), SettingLayer.environment(environment)]
        if let configFile { layers.append(try await SettingLayer.file(configFile)) }
        layers.append(SettingLayer.defaults)
        let reader = ConfigReader(providers: layers.map(\.provider))
        var values: [String: any SettingValue] = [:]
        for setting in ServeSettings.layered {
            values[setting.key] = try await setting.read(from: reader, layers: layers)
        }
        return EffectiveSettings(values: values)
    }
}
