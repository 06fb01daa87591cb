import Testing

@testable import MeridianSettings

/// A refused setting is named as it was given (flag, variable, file key) with the reason.
struct RefusalTests {
    func refusal(arguments: [String] = [], environment: [String: String] = [:], file: [String: Any]? = nil) async throws -> String? {
        do {
            _ = try await EffectiveSettings.resolve(arguments: arguments, environment: environment, configFile: try file.map(configFile))
            return nil
        } catch let error as SettingError {
            return error.description
        }
    }

    @Test func aValueNotOfTheSettingsTypeIsNamedWhereItWasGiven() async throws {
        #expect(try await refusal(environment: ["MERIDIAN_PORT": "eighty"]) == "MERIDIAN_PORT=eighty: not an integer")
        #expect(try await refusal(arguments: ["--port", "eighty"]) == "--port eighty: not an integer")
        #expect(try await refusal(environment: ["MERIDIAN_IDLE_UNLOAD": "inf"]) == "MERIDIAN_IDLE_UNLOAD=inf: not a number")
        let message = try await refusal(file: ["port": "eighty"])
        #expect(message?.hasSuffix(": port: not an integer") == true, "\(message ?? "accepted")")
    }

    @Test func aCheckRefusesWhateverTheSource() async throws {
        let expected = "maxSessions must be at least 1"
        #expect(try await refusal(arguments: ["--max-sessions", "0"]) == expected)
        #expect(try await refusal(environment: ["MERIDIAN_MAX_SESSIONS": "0"]) == expected)
        #expect(try await refusal(file: ["maxSessions": 0]) == expected)
        #expect(try await refusal(environment: ["MERIDIAN_DRAG_POLICY": "whoever"])
            == "dragPolicy \"whoever\": use exclusive, priority or last-writer-wins")
        #expect(try await refusal(arguments: ["--event-loop", "select"]) == "eventLoop \"select\": use libev or poll")
        #expect(try await refusal(arguments: ["--event-log-max-entries=-1"])
            == "eventLogMaxEntries must not be negative (0 turns the log off)")
        #expect(try await refusal(arguments: ["--port", "70000"]) == "port must be within 0...65535")
        #expect(try await refusal(arguments: ["--lease-timeout", "0.05"]) == "leaseTimeout must be at least 0.1 s")
    }

    @Test func unknownFlagsAndKeysAreRefusedByName() async throws {
        #expect(try await refusal(arguments: ["--prot", "1"]) == "unknown option '--prot'. Did you mean '--port'?")
        #expect(try await refusal(arguments: ["--port"]) == "missing value for '--port <integer>'")
        #expect(try await refusal(arguments: ["8080"]) == "unexpected argument '8080'")
        let message = try await refusal(file: ["prot": 1])
        #expect(message?.contains("unknown key \"prot\"") == true, "\(message ?? "accepted")")
    }
}
