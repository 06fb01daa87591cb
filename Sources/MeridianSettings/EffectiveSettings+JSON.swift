import Foundation

extension EffectiveSettings {
    /// Every setting as pretty JSON with sorted keys, unset ones as `null`: a config file
    /// that gives exactly these values (`--print-config`), but for the passwords of URLs
    /// (`postgres://user:***@host/db`, `redis://user:***@host`), which are never printed.
    public func json() throws -> String {
        var object: [String: Any] = [:]
        for setting in ServeSettings.layered {
            let value = values[setting.key]?.json ?? NSNull()
            object[setting.key] = (value as? String).map(Self.redactingPassword) ?? value
        }
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    /// `text` with the password of a `scheme://user:password@host…` URL replaced by `***`;
    /// any other text as it is.
    static func redactingPassword(_ text: String) -> String {
        guard let start = text.range(of: "://") else { return text }
        let rest = text[start.upperBound...]
        // The user information ends at the last @ before the path (a password may hold an @).
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@"), let colon = rest[..<at].firstIndex(of: ":") else { return text }
        return String(text[...colon]) + "***" + String(text[at...])
    }
}
