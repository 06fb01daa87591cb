import Configuration

/// One source of settings as a swift-configuration provider, and how a refusal
/// names the value it gave: `MERIDIAN_PORT=eighty`, `config file PATH: port`.
struct SettingLayer: Sendable {
    let provider: any ConfigProvider
    let origin: @Sendable (any AnySetting) -> String

    /// Whether the reader would take `setting` from this layer: it has a value, or one it cannot read.
    func holds(_ setting: some LayeredSetting) -> Bool {
        do {
            return try provider.value(forKey: AbsoluteConfigKey([setting.key]), type: setting.configType).value != nil
        } catch {
            return true
        }
    }

    /// `MERIDIAN_*` variables: `maxSessions` is read from `MERIDIAN_MAX_SESSIONS`.
    static func environment(_ variables: [String: String]) -> SettingLayer {
        SettingLayer(provider: EnvironmentVariablesProvider(environmentVariables: variables).prefixKeys(with: "meridian")) {
            "\($0.environmentVariable)=\(variables[$0.environmentVariable] ?? "")"
        }
    }

    /// The declared defaults, below every other layer.
    static var defaults: SettingLayer {
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for setting in ServeSettings.layered {
            if let content = setting.defaultContent { values[AbsoluteConfigKey([setting.key])] = ConfigValue(content, isSecret: false) }
        }
        return SettingLayer(provider: InMemoryProvider(name: "defaults", values: values)) { "default \($0.key)" }
    }
}
