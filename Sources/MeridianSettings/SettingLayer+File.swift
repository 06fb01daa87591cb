import Configuration
import Foundation

extension SettingLayer {
    /// A JSON config file (`--config`): an object whose keys are the settings' keys; `null`
    /// leaves a setting to the layers below. Unknown keys are refused, so a misspelling is not ignored.
    static func file(_ path: String) async throws -> SettingLayer {
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw SettingError("cannot read config file \(path): \(error.localizedDescription)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw SettingError("config file \(path) is not a JSON object")
        }
        let known = ServeSettings.all.map(\.key)
        if let unknown = object.keys.filter({ !known.contains($0) }).sorted().first {
            throw SettingError("config file \(path): unknown key \"\(unknown)\" (known: \(known.sorted().joined(separator: ", ")))")
        }
        // The JSON provider reads an object as nested keys (`port.x`), which no setting asks for.
        if let nested = object.filter({ $0.value is [String: Any] }).keys.sorted().first {
            throw SettingError("config file \(path): \(nested): an object, not a setting's value")
        }
        let origin: @Sendable (any AnySetting) -> String = { "config file \(path): \($0.key)" }
        let location = ConfigReader(provider: InMemoryProvider(values: ["filePath": ConfigValue(.string(path), isSecret: false)]))
        do {
            return SettingLayer(provider: try await FileProvider<JSONSnapshot>(config: location), origin: origin)
        } catch {
            throw SettingError("config file \(path): \(error)")
        }
    }
}
