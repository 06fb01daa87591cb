import Foundation
import MeridianAuth
import MeridianCore
@testable import MeridianServer
import MeridianTransport
import Testing

/// Bearer tokens at join, refresh and handshake, on a hub in memory.
@Suite("Bearer tokens at join")
struct AuthTests {
    @Test func theTokenNamesTheParticipantAndCapsItsRole() async throws {
        let server = try await tokenMemoryServer()
        let alice = try server.client()
        let welcome = try alice.join("auth-1", token: try await token("alice", role: .editor, name: "Alice"), ["name": .string("Mallory")])
        #expect(welcome["type"]?.string == "welcome")
        #expect(alice.participant == "alice")
        let me = welcome["snapshot"]?["participants"]?.array?.first { $0["id"]?.string == "alice" }
        #expect(me?["name"]?.string == "Alice", "the token's name wins over the request's")
        #expect(me?["role"]?.string == "editor", "without a role in the request, the token's role")

        let bob = try server.client()
        let refused = try bob.join("auth-1", token: try await token("bob", role: .viewer), ["role": .string("editor")])
        #expect(refused["code"]?.string == "forbidden")
        #expect(refused["field"]?.string == "role")
        #expect(try bob.join("auth-1", token: try await token("bob", role: .editor), ["role": .string("viewer")])["type"]?.string == "welcome")
        #expect(bob.welcome["snapshot"]?["participants"]?.array?.first { $0["id"]?.string == "bob" }?["role"]?.string == "viewer")
    }

    @Test func missingBadAndExpiredTokensAreRefusedAndTheConnectionSurvives() async throws {
        let server = try await tokenMemoryServer()
        let c = try server.client()
        let missing = try c.request("join", ["session": .string("auth-2"), "name": .string("N"), "role": .string("owner")])
        #expect(missing["code"]?.string == "unauthorized")
        #expect(missing["message"]?.string?.contains("bearer token") == true)
        let forged = try c.join("auth-2", token: try await token("n", role: .owner, secret: String(authSecret.reversed())))
        #expect(forged["code"]?.string == "unauthorized")
        #expect(forged["field"]?.string == "token")
        let expired = try c.join("auth-2", token: try await token("n", role: .owner, ttl: -60))
        #expect(expired["code"]?.string == "token_expired")
        let garbage = try c.join("auth-2", token: "not.a.jwt")
        #expect(garbage["code"]?.string == "unauthorized")
        // The same connection then joins with a good token.
        #expect(try c.join("auth-2", token: try await token("n", role: .owner))["type"]?.string == "welcome")
    }

    @Test func aTokenForOneSessionCannotJoinAnother() async throws {
        let server = try await tokenMemoryServer()
        let c = try server.client()
        let t = try await token("carol", role: .editor, session: "auth-one")
        let refused = try c.join("auth-two", token: t)
        #expect(refused["code"]?.string == "forbidden")
        #expect(refused["field"]?.string == "session")
        #expect(try c.join("auth-one", token: t)["type"]?.string == "welcome")
    }

    @Test func dashboardTokensJoinHiddenOnlyAndOthersMayNotHide() async throws {
        let server = try await tokenMemoryServer()
        let owner = try server.client()
        try owner.join("auth-3", token: try await token("olga", role: .owner))
        let dash = try server.client()
        #expect(try dash.join("auth-3", token: try await token("wall", role: .dashboard), ["hidden": .bool(false)])["code"]?.string == "forbidden")
        #expect(try dash.join("auth-3", token: try await token("wall", role: .dashboard))["type"]?.string == "welcome")
        let viewer = try server.client()
        let hide = try viewer.join("auth-3", token: try await token("vic", role: .viewer), ["hidden": .bool(true)])
        #expect(hide["code"]?.string == "forbidden")
        #expect(hide["field"]?.string == "hidden")
        // The owner saw no one join: the dashboard is hidden, the viewer was refused.
        let ping = try owner.request("ping")
        #expect(ping["type"]?.string == "ack")
        #expect(!owner.pending.contains { $0["type"]?.string == "participant.joined" })
    }

    @Test func theSameParticipantFromANewConnectionReplacesTheOld() async throws {
        let server = try await tokenMemoryServer()
        let watcher = try server.client()
        try watcher.join("auth-4", token: try await token("w", role: .viewer))
        let first = try server.client()
        try first.join("auth-4", token: try await token("dan", role: .editor))
        let second = try server.client()
        #expect(try second.join("auth-4", token: try await token("dan", role: .editor))["type"]?.string == "welcome")
        let closed = try first.waitFor { $0["type"]?.string == "$closed" }
        #expect(closed["code"]?.number == 4010)
        let left = try watcher.waitFor { $0["type"]?.string == "participant.left" }
        #expect(left["participant"]?.string == "dan" || left["id"]?.string == "dan")
        #expect(left["reason"]?.string == "replaced")
        let joined = try watcher.waitFor { $0["type"]?.string == "participant.joined" }
        #expect(joined["participant"]?["id"]?.string == "dan")
    }

    @Test func aRefreshedTokenKeepsTheConnectionAndAnExpiredOneClosesIt() async throws {
        let server = try await tokenMemoryServer()
        let keeps = try server.client()
        try keeps.join("auth-5", token: try await token("kim", role: .editor, ttl: 2))
        let lapses = try server.client()
        try lapses.join("auth-5", token: try await token("lee", role: .editor, ttl: 2))

        #expect(try keeps.request("token.refresh", ["token": .string(try await token("kim", role: .owner))])["code"]?.string == "forbidden")
        #expect(try keeps.request("token.refresh", ["token": .string(try await token("someone", role: .editor))])["code"]?.string == "forbidden")
        #expect(try keeps.request("token.refresh", ["token": .string(try await token("kim", role: .editor))])["type"]?.string == "ack")

        // Tokens expire on the hub's wall clock: a tick closes Lee's connection once its token
        // (two seconds) has expired there, and not before.
        server.tick()
        #expect(server.memory.closing(of: lapses.id) == nil, "closed before its token expired")
        server.advance(by: .seconds(10))
        server.tick()
        let closed = try lapses.waitFor { $0["type"]?.string == "$closed" }
        #expect(closed["code"]?.number == 4401)
        // The refreshed connection is still served after the other's token lapsed.
        #expect(try keeps.request("ping")["type"]?.string == "ack")
    }

    @Test func aHandshakeTokenServesJoinsWithoutOne() async throws {
        let server = try await tokenMemoryServer()
        let bearer = try server.client(handshake: Handshake(peer: "127.0.0.1", authorization: "Bearer \(try await token("hdr", role: .editor))"))
        #expect(try bearer.request("join", ["session": .string("auth-6")])["participant"]?.string == "hdr")
        let query = try server.client(handshake: Handshake(peer: "127.0.0.1", query: ["access_token": try await token("qry", role: .viewer)]))
        #expect(try query.request("join", ["session": .string("auth-6")])["participant"]?.string == "qry")
        // A token in the join wins over the handshake's.
        let both = try server.client(handshake: Handshake(peer: "127.0.0.1", query: ["access_token": try await token("qry2", role: .viewer)]))
        #expect(try both.join("auth-6", token: try await token("own", role: .viewer))["type"]?.string == "welcome")
        #expect(both.participant == "own")
        // A bad handshake token refuses the upgrade: the connection never opens.
        do {
            _ = try server.client(handshake: Handshake(peer: "127.0.0.1", authorization: "Bearer not-a-token"))
            Issue.record("a bad handshake token was accepted")
        } catch MemoryHubError.handshakeRefused(let status, _) {
            #expect(status == 401)
        }
    }
}
