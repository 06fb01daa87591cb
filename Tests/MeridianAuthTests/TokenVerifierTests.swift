import Foundation
import MeridianAuth
import Testing

private let secret = "0123456789abcdef0123456789abcdef-test"
private let now = Date(timeIntervalSince1970: 1_800_000_000)

private func claims(
    sub: String = "alice", session: String = "city-*", role: TokenRole = .editor, expires: Date = now.addingTimeInterval(600),
    audience: String? = nil, issuer: String? = nil
) -> AccessClaims {
    AccessClaims(subject: sub, name: "Alice", session: session, role: role, expires: expires, issuedAt: now, audience: audience, issuer: issuer)
}

private func hs256(_ c: AccessClaims, secret: String = secret) async throws -> String {
    try await TokenMinter(key: .secret(secret)).sign(c)
}

@Suite struct TokenVerifierTests {
    @Test func hs256TokenGivesItsGrant() async throws {
        let verifier = try await TokenVerifier.make(keys: [.secret(secret)])
        let grant = try verifier.verify(try await hs256(claims()), at: now).get()
        #expect(grant == AccessGrant(participant: "alice", name: "Alice", sessions: "city-*", role: .editor, expires: now.addingTimeInterval(600)))
        #expect(grant.allows(session: "city-paris"))
        #expect(!grant.allows(session: "village-1"))
    }

    @Test func wrongSecretIsUnauthorized() async throws {
        let verifier = try await TokenVerifier.make(keys: [.secret(secret)])
        let token = try await hs256(claims(), secret: String(secret.reversed()))
        #expect(verifier.verify(token, at: now).failure?.code == .unauthorized)
        #expect(verifier.verify(token, at: now).failure?.message.contains("signature") == true)
    }

    @Test func tamperedPayloadIsUnauthorized() async throws {
        let verifier = try await TokenVerifier.make(keys: [.secret(secret)])
        let token = try await hs256(claims(role: .viewer))
        var parts = token.split(separator: ".").map(String.init)
        let forged = try JSONEncoder().encode(claims(role: .owner))
        parts[1] = forged.base64EncodedString().replacingOccurrences(of: "=", with: "")
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        #expect(verifier.verify(parts.joined(separator: "."), at: now).failure?.code == .unauthorized)
    }

    @Test func expiredTokenIsTokenExpired() async throws {
        let verifier = try await TokenVerifier.make(keys: [.secret(secret)], leeway: 5)
        let token = try await hs256(claims(expires: now.addingTimeInterval(-6)))
        #expect(verifier.verify(token, at: now).failure?.code == .tokenExpired)
        // Within the leeway it still passes.
        let recent = try await hs256(claims(expires: now.addingTimeInterval(-4)))
        #expect(verifier.verify(recent, at: now).failure == nil)
    }

    @Test func unsignedAlgNoneIsRefused() async throws {
        let verifier = try await TokenVerifier.make(keys: [.secret(secret)])
        let header = Data(#"{"alg":"none","typ":"JWT"}"#.utf8).base64EncodedString().replacingOccurrences(of: "=", with: "")
        let body = try JSONEncoder().encode(claims()).base64EncodedString().replacingOccurrences(of: "=", with: "")
        let result = verifier.verify("\(header).\(body).", at: now)
        #expect(result.failure?.code == .unauthorized)
        #expect(result.failure?.message.contains("no key for alg none") == true)
    }

    @Test(arguments: ["", "abc", "a.b", "a.b.c", String(repeating: "x", count: 9_000), "\u{0}.\u{1}.\u{2}"])
    func malformedTokensAreUnauthorized(token: String) async throws {
        let verifier = try await TokenVerifier.make(keys: [.secret(secret)])
        #expect(verifier.verify(token, at: now).failure?.code == .unauthorized)
    }

    @Test func audienceAndIssuerAreChecked() async throws {
        let verifier = try await TokenVerifier.make(keys: [.secret(secret)], audience: "meridian", issuer: "https://id.example")
        #expect(verifier.verify(try await hs256(claims(audience: "meridian", issuer: "https://id.example")), at: now).failure == nil)
        #expect(verifier.verify(try await hs256(claims(audience: "other", issuer: "https://id.example")), at: now).failure?.message
            == "token is not for audience meridian")
        #expect(verifier.verify(try await hs256(claims(audience: "meridian", issuer: "https://evil.example")), at: now).failure?.message
            == "token is not from issuer https://id.example")
    }

    @Test func shortSecretsAreRefused() async throws {
        await #expect(throws: KeyError.self) { try await TokenVerifier.make(keys: [.secret("short")]) }
        await #expect(throws: KeyError.self) { try await TokenVerifier.make(keys: []) }
    }

    @Test(arguments: ["ec", "rsa"])
    func publicKeyTokensVerify(kind: String) async throws {
        let (privatePEM, publicPEM) = try generateKeyPair(kind)
        let (_, otherPublicPEM) = try generateKeyPair(kind)
        let token = try await TokenMinter(key: .privateKey(pem: privatePEM)).sign(claims(role: .owner))
        let verifier = try await TokenVerifier.make(keys: [.publicKey(pem: publicPEM)])
        #expect(verifier.algorithms == [kind == "ec" ? "ES256" : "RS256"])
        #expect(try verifier.verify(token, at: now).get().role == .owner)
        let other = try await TokenVerifier.make(keys: [.publicKey(pem: otherPublicPEM)])
        #expect(other.verify(token, at: now).failure?.code == .unauthorized)
        // An HS256 token is not accepted where only a public key is configured.
        #expect(verifier.verify(try await hs256(claims()), at: now).failure?.code == .unauthorized)
    }

    @Test func kidSelectsTheKey() async throws {
        let other = String(secret.reversed())
        let verifier = try await TokenVerifier.make(keys: [.secret(secret, kid: "one"), .secret(other, kid: "two")])
        let two = try await TokenMinter(key: .secret(other), kid: "two").sign(claims())
        #expect(verifier.verify(two, at: now).failure == nil)
        let mislabelled = try await TokenMinter(key: .secret(other), kid: "one").sign(claims())
        #expect(verifier.verify(mislabelled, at: now).failure?.code == .unauthorized)
    }

    @Test func aKidThatNamesNoConfiguredKeyIsRefused() async throws {
        let (privatePEM, publicPEM) = try generateKeyPair("ec")
        let verifier = try await TokenVerifier.make(keys: [.publicKey(pem: publicPEM)])
        let unknown = try await TokenMinter(key: .privateKey(pem: privatePEM), kid: "no-such-key").sign(claims())
        let refused = verifier.verify(unknown, at: now)
        #expect(refused.failure?.code == .unauthorized)
        #expect(refused.failure?.message == "no ES256 key has kid \"no-such-key\"")
        // The HS256 secret has no kid: a token naming one names no configured key.
        let hs = try await TokenVerifier.make(keys: [.secret(secret)])
        #expect(hs.verify(try await TokenMinter(key: .secret(secret), kid: "k1").sign(claims()), at: now).failure?.code == .unauthorized)
        #expect(hs.verify(try await hs256(claims()), at: now).failure == nil)
    }

    @Test(arguments: ["ec", "rsa"])
    func aPEMKeyIsNamedByItsLabelOrItsThumbprint(kind: String) async throws {
        let (firstPrivate, firstPublic) = try generateKeyPair(kind)
        let (secondPrivate, secondPublic) = try generateKeyPair(kind)
        let file = "Keys of the identity service\nkid: rotation-2\n\(secondPublic)\n\(firstPublic)"
        let keys = VerificationKey.publicKeys(fromPEMFile: file)
        #expect(keys.map(\.kid) == ["rotation-2", nil])
        let verifier = try await TokenVerifier.make(keys: keys)
        let thumbprint = try VerificationKey.thumbprint(ofPublicKeyPEM: firstPublic)
        for (key, kid) in [(firstPrivate, thumbprint), (secondPrivate, "rotation-2")] {
            #expect(verifier.verify(try await TokenMinter(key: .privateKey(pem: key), kid: kid).sign(claims()), at: now).failure == nil)
            #expect(verifier.verify(try await TokenMinter(key: .privateKey(pem: key)).sign(claims()), at: now).failure == nil)
        }
        // Each kid picks its key only: the other key's kid on a token is refused.
        #expect(verifier.verify(try await TokenMinter(key: .privateKey(pem: firstPrivate), kid: "rotation-2").sign(claims()), at: now)
            .failure?.message == "token signature does not verify")
        await #expect(throws: KeyError.self) {
            try await TokenVerifier.make(keys: [.publicKey(pem: firstPublic), .publicKey(pem: firstPublic)])
        }
    }

    @Test func thumbprintsFollowRFC7638() throws {
        // The key of RFC 7638 §3.1 (n and e of its JWK) in PEM, and the thumbprint the RFC gives.
        let pem = """
            -----BEGIN PUBLIC KEY-----
            MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA0vx7agoebGcQSuuPiLJX
            ZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tS
            oc/BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ/2W+5JsGY4Hc5n9yBXArwl93lqt
            7/RN5w6Cf0h4QyQ5v+65YGjQR0/FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0
            zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt+bFTWhAI4vMQFh6WeZu0f
            M4lFd2NcRwr3XPksINHaQ+G/xBniIqbw0Ls1jF44+csFCur+kEgU8awapJzKnqDK
            gwIDAQAB
            -----END PUBLIC KEY-----

            """
        #expect(try VerificationKey.thumbprint(ofPublicKeyPEM: pem) == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs")
    }

    @Test(arguments: [
        ("city-1", "city-1", true), ("city-1", "city-2", false), ("city-*", "city-2", true), ("city-*", "city-", true),
        ("*", "anything", true), ("*-x-*", "a-x-b", true), ("*-x-*", "a-y-b", false), ("a*b*c", "aXbYc", true),
        ("a*b*c", "aXbY", false), ("", "x", false), ("**", "", true),
    ])
    func sessionPatterns(pattern: String, id: String, matches: Bool) {
        #expect(SessionPattern.matches(pattern, id) == matches)
    }
}

extension Result {
    var failure: Failure? {
        if case .failure(let e) = self { return e }
        return nil
    }
}

/// A fresh key pair from openssl: P-256 for "ec", RSA 2048 for "rsa".
func generateKeyPair(_ kind: String) throws -> (privatePEM: String, publicPEM: String) {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("meridian-keys-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: dir) }
    let key = dir.appendingPathComponent("key.pem").path, pub = dir.appendingPathComponent("pub.pem").path
    let algorithm = kind == "ec" ? ["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"] : ["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"]
    try run(["openssl", "genpkey"] + algorithm + ["-out", key])
    try run(["openssl", "pkey", "-in", key, "-pubout", "-out", pub])
    return (try String(contentsOfFile: key, encoding: .utf8), try String(contentsOfFile: pub, encoding: .utf8))
}

private func run(_ arguments: [String]) throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw KeyError("\(arguments.joined(separator: " ")) failed") }
}
