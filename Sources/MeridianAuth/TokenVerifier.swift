import Foundation
import JWTKit

/// Checks bearer tokens against the deployment's keys, synchronously (the
/// server's service thread calls it). Keys are prepared once by ``make(keys:audience:issuer:leeway:)``.
public final class TokenVerifier: Sendable {
    struct Key: Sendable {
        var kid: String?
        var algorithm: any JWTAlgorithm
    }

    /// Longest token accepted, in bytes.
    public static let maxTokenBytes = 8_192

    let keys: [Key]
    /// When set, a token's `aud` must contain it.
    public let audience: String?
    /// When set, a token's `iss` must equal it.
    public let issuer: String?
    /// Clock skew tolerated on `exp` and `nbf`.
    public let leeway: TimeInterval

    init(keys: [Key], audience: String?, issuer: String?, leeway: TimeInterval) {
        self.keys = keys
        self.audience = audience
        self.issuer = issuer
        self.leeway = leeway
    }

    /// Algorithms of the configured keys (`HS256`, `ES256`, `RS256`).
    public var algorithms: [String] { keys.map(\.algorithm.name) }

    /// Prepares the keys. Throws ``KeyError`` for an unusable key.
    public static func make(
        keys: [VerificationKey], audience: String? = nil, issuer: String? = nil, leeway: TimeInterval = 5
    ) async throws -> TokenVerifier {
        guard !keys.isEmpty else { throw KeyError("no verification key configured") }
        var prepared: [Key] = []
        for key in keys {
            let kid = try key.resolvedKid()
            if let kid, prepared.contains(where: { $0.kid == kid }) { throw KeyError("two keys have kid \"\(kid)\"") }
            prepared.append(Key(kid: kid, algorithm: try await key.algorithm()))
        }
        return TokenVerifier(keys: prepared, audience: audience, issuer: issuer, leeway: leeway)
    }

    /// The grant `token` carries, or why it is refused.
    public func verify(_ token: String, at now: Date = Date()) -> Result<AccessGrant, AuthError> {
        let bytes = Array(token.utf8)
        guard !bytes.isEmpty else { return .failure(AuthError(.unauthorized, "empty token")) }
        guard bytes.count <= Self.maxTokenBytes else {
            return .failure(AuthError(.unauthorized, "token longer than \(Self.maxTokenBytes) bytes"))
        }
        let parser = DefaultJWTParser()
        let header: JWTHeader, claims: AccessClaims, parts: (header: ArraySlice<UInt8>, payload: ArraySlice<UInt8>, signature: ArraySlice<UInt8>)
        do {
            parts = try parser.getTokenParts(bytes)
            (header, claims, _) = try parser.parse(bytes, as: AccessClaims.self)
        } catch {
            return .failure(AuthError(.unauthorized, "malformed token: a JWT with claims sub, session, role and exp is expected"))
        }
        guard let alg = header.alg else { return .failure(AuthError(.unauthorized, "token header has no alg")) }
        // A token without kid may be signed by any key of its alg; one with a kid only by that key.
        let candidates = keys.filter { key in
            key.algorithm.name == alg && (header.kid == nil || key.kid == header.kid)
        }
        guard !candidates.isEmpty else {
            if let kid = header.kid, keys.contains(where: { $0.algorithm.name == alg }) {
                return .failure(AuthError(.unauthorized, "no \(alg) key has kid \"\(kid)\""))
            }
            return .failure(AuthError(.unauthorized, "no key for alg \(alg) (accepted: \(Set(algorithms).sorted().joined(separator: ", ")))"))
        }
        let signed = Array(parts.header) + [UInt8(ascii: ".")] + Array(parts.payload)
        guard let signature = base64URLDecoded(parts.signature) else {
            return .failure(AuthError(.unauthorized, "token signature is not base64url"))
        }
        guard candidates.contains(where: { (try? $0.algorithm.verify(signature, signs: signed)) == true }) else {
            return .failure(AuthError(.unauthorized, "token signature does not verify"))
        }
        return check(claims, at: now)
    }

    /// `grant`, verified earlier, if it has not expired since.
    public func recheck(_ grant: AccessGrant, at now: Date = Date()) -> Result<AccessGrant, AuthError> {
        guard now.timeIntervalSince(grant.expires) <= leeway else {
            return .failure(AuthError(.tokenExpired, "token expired at \(Int(grant.expires.timeIntervalSince1970)) (unix time)"))
        }
        return .success(grant)
    }

    private func check(_ claims: AccessClaims, at now: Date) -> Result<AccessGrant, AuthError> {
        if let nbf = claims.nbf, nbf.value.timeIntervalSince(now) > leeway {
            return .failure(AuthError(.unauthorized, "token not valid before \(Int(nbf.value.timeIntervalSince1970)) (unix time)"))
        }
        if let audience, !(claims.aud?.value.contains(audience) ?? false) {
            return .failure(AuthError(.unauthorized, "token is not for audience \(audience)"))
        }
        if let issuer, claims.iss?.value != issuer {
            return .failure(AuthError(.unauthorized, "token is not from issuer \(issuer)"))
        }
        let sub = claims.sub.value
        guard !sub.isEmpty, sub.utf8.count <= 128, !sub.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            return .failure(AuthError(.unauthorized, "sub must be 1-128 bytes without control characters"))
        }
        guard !claims.session.isEmpty, claims.session.utf8.count <= 256 else {
            return .failure(AuthError(.unauthorized, "session claim must be 1-256 bytes"))
        }
        return recheck(AccessGrant(
            participant: sub, name: claims.name, sessions: claims.session, role: claims.role, expires: claims.exp.value), at: now)
    }
}

/// A key tokens are checked with.
public enum VerificationKey: Sendable {
    /// HS256 with a shared secret (at least 32 bytes); without a `kid` it has none.
    case secret(String, kid: String? = nil)
    /// ES256 (P-256) or RS256 (RSA, 2048 bits or more) public key, PEM; without a `kid` it is
    /// named by its RFC 7638 thumbprint.
    case publicKey(pem: String, kid: String? = nil)

    /// The kid given to the key, if any (see ``publicKeys(fromPEMFile:)`` for the one a PEM key gets).
    public var kid: String? {
        switch self {
        case .secret(_, let kid), .publicKey(_, let kid): kid
        }
    }

    func algorithm() async throws -> any JWTAlgorithm {
        let collection = JWTKeyCollection()
        switch self {
        case .secret(let secret, _):
            guard secret.utf8.count >= 32 else { throw KeyError("an HS256 secret must be at least 32 bytes") }
            await collection.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        case .publicKey(let pem, _):
            if let key = try? ES256PublicKey(pem: pem) {
                await collection.add(ecdsa: key)
            } else if let key = try? Insecure.RSA.PublicKey(pem: pem) {
                await collection.add(rsa: key, digestAlgorithm: .sha256)
            } else {
                throw KeyError("not a P-256 (ES256) or RSA (RS256, 2048+ bits) public key in PEM")
            }
        }
        return try await collection.getKey()
    }
}

/// Bytes of unpadded base64url text, or nil if it is not that.
func base64URLDecoded(_ text: ArraySlice<UInt8>) -> [UInt8]? {
    var standard = String(decoding: text, as: UTF8.self)
        .replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
    standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
    return Data(base64Encoded: standard).map(Array.init)
}

/// A key that cannot be used.
public struct KeyError: Error, CustomStringConvertible, Sendable {
    /// What is wrong with the key.
    public var description: String
    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}
