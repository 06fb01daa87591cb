import Foundation
import Testing

@testable import MeridianSettings

/// Walks the one declaration table: every setting has a flag, a `MERIDIAN_*` variable and
/// a config-file key, each read into the setting's value, and a line in `--help`.
struct DeclarationTableTests {
    /// A value of `setting` other than its default that its check accepts, as text and as JSON.
    static func sample(_ setting: any AnySetting) -> (text: String, json: Any, display: String)? {
        func other(_ choices: [String], _ current: String) -> String { choices.first { $0 != current } ?? current }
        switch setting {
        case let s as Setting<Int>: return ("\(s.defaultValue + 1)", s.defaultValue + 1, "\(s.defaultValue + 1)")
        case let s as Setting<Double>: return ("\(s.defaultValue + 0.5)", s.defaultValue + 0.5, "\(s.defaultValue + 0.5)")
        case let s as Setting<String>:
            let value = s.choices.isEmpty ? s.defaultValue + "-sample" : other(s.choices, s.defaultValue)
            return (value, value, value)
        case is Setting<String?>: return ("sample", "sample", "sample")
        case is Setting<[String]>: return ("sample", ["sample"], "sample")
        default: return nil
        }
    }

    @Test func everyDeclarationIsNamedByItsKey() {
        let children = Mirror(reflecting: ServeSettings.declared).children
        #expect(children.count == ServeSettings.all.count, "a property of ServeSettings that is not a Setting")
        for (label, value) in children {
            #expect((value as? any AnySetting)?.key == label)
        }
        #expect(ServeSettings.all.count >= 40)
    }

    @Test func keysFlagsAndVariablesAreUnique() {
        let all = ServeSettings.all
        for names in [all.map(\.key), all.map(\.flag), all.map(\.environmentVariable)] {
            #expect(Set(names).count == names.count)
        }
    }

    @Test(arguments: ServeSettings.all.map(\.key))
    func theFlagTheVariableAndTheFileKeyEachGiveTheSetting(_ key: String) async throws {
        let setting = try #require(ServeSettings.all.first { $0.key == key })
        let sample = try #require(Self.sample(setting), "\(key): a type the table walk does not know")
        let fromFlag = try await EffectiveSettings.resolve(arguments: [setting.flag, sample.text], environment: [:], configFile: nil)
        let fromEnvironment = try await EffectiveSettings.resolve(
            arguments: [], environment: [setting.environmentVariable: sample.text], configFile: nil)
        let fromFile = try await EffectiveSettings.resolve(arguments: [], environment: [:], configFile: try configFile([key: sample.json]))
        let defaults = try await EffectiveSettings.resolve(arguments: [], environment: [:], configFile: nil)
        #expect(fromFlag.values[key]?.display == sample.display, "flag \(setting.flag)")
        #expect(fromEnvironment.values[key]?.display == sample.display, "variable \(setting.environmentVariable)")
        #expect(fromFile.values[key]?.display == sample.display, "file key \(key)")
        #expect(defaults.values[key]?.display == setting.defaultDisplay, "default of \(key)")
    }

    @Test func helpListsEverySetting() {
        let help = ServeSettings.help()
        for setting in ServeSettings.all {
            #expect(help.contains("\(setting.flag) \(setting.placeholder)\n"))
            #expect(help.contains("key \(setting.key), variable \(setting.environmentVariable)"))
        }
        #expect(help.split(separator: "\n").allSatisfy { $0.count <= 70 })
    }

    @Test func printConfigNamesEverySettingAndReadsBackAsAConfigFile() async throws {
        let effective = try await EffectiveSettings.resolve(arguments: ["--data-dir", "/data"], environment: [:], configFile: nil)
        let printed = try effective.json()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(printed.utf8)) as? [String: Any])
        #expect(Set(object.keys) == Set(ServeSettings.all.map(\.key)))
        #expect(object["dataDir"] as? String == "/data" && object["tlsCert"] is NSNull)
        let again = try await EffectiveSettings.resolve(arguments: [], environment: [:], configFile: try configFile(object))
        #expect(try again.json() == printed)
    }
}
