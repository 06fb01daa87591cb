import Foundation

extension EffectiveSettings {
    /// Every setting as pretty JSON with sorted keys, unset ones as `null`: a config file
    /// that gives exactly these values (`--print-config`).
    public func json() throws -> String {
        var object: [String: Any] = [:]
        for setting in ServeSettings.layered {
            object[setting.key] = values[setting.key]?.json ?? NSNull()
        }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }
}
