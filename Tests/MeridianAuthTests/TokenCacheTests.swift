import Foundation
import MeridianAuth
import Testing

private let start = Date(timeIntervalSince1970: 1_800_000_000)

private func token(_ sub: String, privatePEM: String, expires: Date = start.addingTimeInterval(600)) async throws -> String {
    try await TokenMinter(key: .privateKey(pem: privatePEM)).sign(
        AccessClaims(subject: sub, name: nil, session: "city-*", role: .editor, expires: expires, issuedAt: start))
}

@Suite struct TokenCacheTests {
    @Test(arguments: ["ec", "rsa"])
    func anAsymmetricTokenIsVerifiedOnceAndItsExpiryAtEveryUse(kind: String) async throws {
        let (privatePEM, publicPEM) = try generateKeyPair(kind)
        let cache = TokenCache(verifier: try await TokenVerifier.make(keys: [.publicKey(pem: publicPEM)], leeway: 5))
        #expect(cache.capacity == TokenCache.defaultCapacity)
        let jwt = try await token("alice", privatePEM: privatePEM)
        #expect(try cache.verify(jwt, at: start).get().participant == "alice")
        #expect(cache.hits == 0 && cache.count == 1)
        #expect(try cache.verify(jwt, at: start.addingTimeInterval(60)).get().participant == "alice")
        #expect(cache.hits == 1)
        // Kept, but expired: refused as the verifier would.
        #expect(cache.verify(jwt, at: start.addingTimeInterval(606)).failure?.code == .tokenExpired)
        #expect(cache.hits == 2)
        // A token that does not verify is not kept.
        let (otherPrivate, _) = try generateKeyPair(kind)
        let forged = try await token("alice", privatePEM: otherPrivate)
        #expect(cache.verify(forged, at: start).failure?.code == .unauthorized)
        #expect(cache.verify(forged, at: start).failure?.code == .unauthorized)
        #expect(cache.count == 1 && cache.hits == 2)
    }

    @Test func theCacheKeepsAtMostItsCapacityReplacingTheOldest() async throws {
        let (privatePEM, publicPEM) = try generateKeyPair("ec")
        let cache = TokenCache(verifier: try await TokenVerifier.make(keys: [.publicKey(pem: publicPEM)]), capacity: 2)
        let a = try await token("a", privatePEM: privatePEM), b = try await token("b", privatePEM: privatePEM)
        let c = try await token("c", privatePEM: privatePEM)
        for jwt in [a, b, c] { #expect(cache.verify(jwt, at: start).failure == nil) }
        #expect(cache.count == 2)
        #expect(cache.verify(c, at: start).failure == nil)
        #expect(cache.hits == 1)
        // `a` was replaced: verified again (no hit), and kept in place of `b`.
        #expect(cache.verify(a, at: start).failure == nil)
        #expect(cache.hits == 1 && cache.count == 2)
        #expect(cache.verify(c, at: start).failure == nil && cache.hits == 2)
    }

    @Test func withOnlyHS256KeysNothingIsKept() async throws {
        let secret = "0123456789abcdef0123456789abcdef-test"
        let cache = TokenCache(verifier: try await TokenVerifier.make(keys: [.secret(secret)]))
        #expect(cache.capacity == 0)
        let jwt = try await TokenMinter(key: .secret(secret)).sign(
            AccessClaims(subject: "bob", name: nil, session: "*", role: .viewer, expires: start.addingTimeInterval(60), issuedAt: start))
        #expect(cache.verify(jwt, at: start).failure == nil)
        #expect(cache.verify(jwt, at: start).failure == nil)
        #expect(cache.count == 0 && cache.hits == 0)
    }
}
