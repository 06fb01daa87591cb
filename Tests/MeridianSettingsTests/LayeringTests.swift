import Foundation
import Testing

@testable import MeridianSettings

/// The same setting given as a flag, a `MERIDIAN_*` variable and a config-file key:
/// flags win over the environment, which wins over the file, which wins over the default.
struct LayeringTests {
    struct Given: Sendable, CustomTestStringConvertible {
        var flag: Bool, environment: Bool, file: Bool
        var testDescription: String { "flag \(flag), environment \(environment), file \(file)" }
        /// What `maxSessions` resolves to: the highest layer that gives it.
        var expected: Int { flag ? 9 : environment ? 8 : file ? 7 : 10_000 }
    }

    static let every: [Given] = [false, true].flatMap { f in
        [false, true].flatMap { e in [false, true].map { Given(flag: f, environment: e, file: $0) } }
    }

    @Test(arguments: every)
    func theHighestLayerThatGivesASettingWins(_ given: Given) async throws {
        let settings = try await EffectiveSettings.resolve(
            arguments: given.flag ? ["--max-sessions", "9"] : [],
            environment: given.environment ? ["MERIDIAN_MAX_SESSIONS": "8"] : [:],
            configFile: given.file ? try configFile(["maxSessions": 7]) : nil)
        #expect(settings.maxSessions == given.expected)
    }

    @Test func eachSettingTakesItsOwnHighestLayer() async throws {
        let file = try configFile(["port": 1111, "maxSessions": 7, "dataDir": "/from/file", "logLevel": "debug", "idleUnload": 12.5])
        let settings = try await EffectiveSettings.resolve(
            arguments: ["--log-level", "error"],
            environment: ["MERIDIAN_MAX_SESSIONS": "8", "MERIDIAN_LOG_LEVEL": "warning", "MERIDIAN_DRAG_POLICY": "priority"],
            configFile: file)
        #expect(settings.port == 1111)
        #expect(settings.maxSessions == 8)
        #expect(settings.logLevel == "error")
        #expect(settings.dragPolicy == "priority")
        #expect(settings.dataDir == "/from/file")
        #expect(settings.idleUnload == 12.5)
        #expect(settings.historySize == 4_096)
        #expect(settings.tlsCert == nil)
    }

    @Test func aListTakesItsItemsFromOneLayer() async throws {
        let settings = try await EffectiveSettings.resolve(
            arguments: ["--allowed-origins", "https://a.example, https://b.example", "--allowed-origins=https://c.example"],
            environment: ["MERIDIAN_ALLOWED_ORIGINS": "https://env.example"],
            configFile: try configFile(["allowedOrigins": ["https://file.example"]]))
        #expect(settings.allowedOrigins == ["https://a.example", "https://b.example", "https://c.example"])
        let fromEnvironment = try await EffectiveSettings.resolve(
            arguments: [], environment: ["MERIDIAN_ALLOWED_ORIGINS": "https://a.example, ,https://b.example"], configFile: nil)
        #expect(fromEnvironment.allowedOrigins == ["https://a.example", "https://b.example"])
    }

    @Test func aFlagGivenTwiceKeepsItsLastValue() async throws {
        let settings = try await EffectiveSettings.resolve(arguments: ["--port", "0", "--port=9"], environment: [:], configFile: nil)
        #expect(settings.port == 9)
    }

    @Test func aNullInTheFileLeavesTheSettingToTheLayersBelow() async throws {
        let settings = try await EffectiveSettings.resolve(
            arguments: [], environment: [:], configFile: try configFile(["dataDir": NSNull(), "port": NSNull()]))
        #expect(settings.dataDir == nil && settings.port == 8080)
    }

    @Test func theStoreURLIsReadWholeFromEveryLayer() async throws {
        let url = "postgres://meridian:p%40ss=w:rd@db.example:5433/maps?sslmode=disable"
        let fromFlag = try await EffectiveSettings.resolve(arguments: ["--store=\(url)"], environment: [:], configFile: nil)
        let fromEnvironment = try await EffectiveSettings.resolve(arguments: [], environment: ["MERIDIAN_STORE": url], configFile: nil)
        let fromFile = try await EffectiveSettings.resolve(arguments: [], environment: [:], configFile: try configFile(["store": url]))
        #expect([fromFlag.store, fromEnvironment.store, fromFile.store] == [url, url, url])
        let unset = try await EffectiveSettings.resolve(arguments: ["--data-dir", "/data"], environment: [:], configFile: nil)
        #expect(unset.store == nil)
    }
}
