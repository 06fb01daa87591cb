import Configuration

extension SettingLayer {
    /// The setting flags of the command line (`--max-sessions 8`, `--max-sessions=8`), parsed by
    /// the declared table: an unknown flag, a missing value or a value not of the setting's type
    /// is refused by name. A flag given twice keeps its last value; a list's flag adds to it.
    ///
    /// swift-configuration's `CommandLineArgumentsProvider` would accept misspelled flags and
    /// split every value at commas (a tile URL or a path may hold one), so flags are parsed
    /// here and handed to the reader as the top layer, as its guide to swift-argument-parser does.
    static func flags(_ arguments: [String]) throws -> SettingLayer {
        let byFlag = Dictionary(uniqueKeysWithValues: ServeSettings.layered.map { ($0.flag, $0) })
        var given: [String: [String]] = [:]
        var rest = arguments[...]
        while let argument = rest.popFirst() {
            guard argument.hasPrefix("--") else { throw SettingError("unexpected argument '\(argument)'") }
            let name: String, inline: String?
            if let equals = argument.firstIndex(of: "=") {
                (name, inline) = (String(argument[..<equals]), String(argument[argument.index(after: equals)...]))
            } else {
                (name, inline) = (argument, nil)
            }
            guard let setting = byFlag[name] else {
                let near = byFlag.keys.filter { distance($0, name) <= 2 }.sorted().first
                throw SettingError("unknown option '\(name)'" + (near.map { ". Did you mean '\($0)'?" } ?? ""))
            }
            let text: String
            if let inline {
                text = inline
            } else if let next = rest.first, !next.hasPrefix("--") {
                text = rest.removeFirst()
            } else {
                throw SettingError("missing value for '\(name) \(setting.placeholder)'")
            }
            given[setting.key, default: []].append(text)
        }
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        for setting in ServeSettings.layered {
            guard let texts = given[setting.key] else { continue }
            values[AbsoluteConfigKey([setting.key])] = ConfigValue(try setting.flagContent(texts), isSecret: false)
        }
        return SettingLayer(provider: InMemoryProvider(name: "flags", values: values)) { $0.flag }
    }
}

/// Edits (insertions, deletions, substitutions) that turn `a` into `b`.
private func distance(_ a: String, _ b: String) -> Int {
    let b = Array(b)
    var row = Array(0...b.count)
    for (i, x) in a.enumerated() {
        var diagonal = row[0]
        row[0] = i + 1
        for (j, y) in b.enumerated() {
            let substituted = diagonal + (x == y ? 0 : 1)
            diagonal = row[j + 1]
            row[j + 1] = min(substituted, row[j + 1] + 1, row[j] + 1)
        }
    }
    return row[b.count]
}
