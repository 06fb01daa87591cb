extension ServeSettings {
    /// Every setting for `meridian serve --help`: its flag, then its help, allowed values
    /// and default, then its config-file key and environment variable, in lines of at most
    /// `width` columns (swift-argument-parser indents them by 8 and wraps past 80).
    public static func help(width: Int = 70) -> String {
        all.map { setting in
            var text = setting.help
            if let choices = (setting as? any LayeredSetting)?.choices, !choices.isEmpty {
                text += " One of: \(choices.joined(separator: ", "))."
            }
            if let shown = setting.defaultDisplay { text += " Default: \(shown)." }
            let lines = ["\(setting.flag) \(setting.placeholder)"] + wrap(text, width: width - 4).map { "    " + $0 }
                + ["    key \(setting.key), variable \(setting.environmentVariable)"]
            return lines.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// Words of `text` in lines of at most `width` columns (a longer word has a line of its own).
    static func wrap(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += line.isEmpty ? String(word) : " " + word
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }
}
