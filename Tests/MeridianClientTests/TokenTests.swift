import Foundation
import MeridianAuth
import MeridianClient
import MeridianProtocol
import MeridianServer
import MeridianTesting
import Testing

private let secret = "client-test-secret-0123456789abcdef-xyz"

private func token(_ sub: String, role: TokenRole, session: String = "tok-*") async throws -> String {
    try await TokenMinter(key: .secret(secret)).sign(
        AccessClaims(subject: sub, name: sub.capitalized, session: session, role: role, expires: Date().addingTimeInterval(600)))
}

@Suite("Client with bearer tokens", .serialized)
struct TokenTests {
    private func server() async throws -> TestServer {
        let verifier = try await TokenVerifier.make(keys: [.secret(secret)])
        return try TestServer.overWire { $0.authentication = .tokens(verifier) }
    }

    @Test func joinsAsTheTokensParticipantAndRefreshes() async throws {
        let server = try await server()
        defer { server.stop() }
        let client = MeridianClient(over: server, configuration: ClientConfiguration(
            session: "tok-1", name: "ignored", role: nil, token: try await token("ada", role: .editor)))
        defer { client.close() }
        let welcome = try client.connect()
        #expect(welcome.participant == "ada")
        #expect(client.state?.participants["ada"].flatMap { if case .object(let o) = $0 { o["role"] } else { nil } } == .string("editor"))
        #expect(client.state?.participants["ada"].flatMap { if case .object(let o) = $0 { o["name"] } else { nil } } == .string("Ada"))
        _ = try await client.refreshToken(try await token("ada", role: .editor))
        await #expect(throws: ClientError.self) { try await client.refreshToken(try await token("bea", role: .editor)) }
    }

    @Test func aRefusedTokenFailsConnect() async throws {
        let server = try await server()
        defer { server.stop() }
        let client = MeridianClient(over: server, configuration: ClientConfiguration(
            session: "tok-2", name: "x", role: nil, token: try await token("cy", role: .viewer, session: "elsewhere")))
        defer { client.close() }
        do {
            try client.connect()
            Issue.record("connect succeeded with a token for another session")
        } catch let error as ClientError {
            #expect(error.code == "forbidden")
            #expect(error.field == "session")
        }
    }

    @Test func aClientReplacedByANewerConnectionDoesNotReconnect() async throws {
        let server = try await server()
        defer { server.stop() }
        let t = try await token("dee", role: .editor)
        let first = MeridianClient(over: server, configuration: ClientConfiguration(session: "tok-3", name: "d", role: nil, token: t))
        let recorder = Recorder()
        first.delegate = recorder
        defer { first.close() }
        try first.connect()
        let second = MeridianClient(over: server, configuration: ClientConfiguration(session: "tok-3", name: "d", role: nil, token: t))
        defer { second.close() }
        try second.connect()
        #expect(recorder.wait { $0.contains(.didClose) }, "the replaced client gives up instead of taking the session back")
        #expect(recorder.updates.contains(.didDisconnect(code: 4010)))
        #expect(recorder.updates.contains(.didStop(code: 4010, advice: .stayReplaced)), "the app is told why")
        // The newer connection is still the participant.
        _ = try await second.send(.ping)
        #expect(second.state?.participants.keys.sorted() == ["dee"])
    }

    @Test func aTokenInTheAuthorizationHeaderAloneAdmitsTheJoin() async throws {
        let server = try await server()
        defer { server.stop() }
        let t = try await token("eve", role: .editor)
        // The join itself carries no token: only the upgrade request's header does.
        let client = MeridianClient(configuration: ClientConfiguration(session: "tok-4", name: "e", role: nil)) {
            Wire.transport(port: server.port, token: t)
        }
        defer { client.close() }
        #expect(try client.connect().participant == "eve")
        let anonymous = MeridianClient(configuration: ClientConfiguration(session: "tok-4", name: "anon", role: nil)) {
            Wire.transport(port: server.port)
        }
        defer { anonymous.close() }
        #expect(throws: ClientError.self) { try anonymous.connect() }
    }
}
