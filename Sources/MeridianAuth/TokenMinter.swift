import Foundation
import JWTKit

/// Signs tokens: `meridian token` for development, and tests.
public struct TokenMinter: Sendable {
    /// The key tokens are signed with.
    public enum SigningKey: Sendable {
        /// HS256 with a shared secret (at least 32 bytes).
        case secret(String)
        /// ES256 (P-256) or RS256 (RSA) private key, PEM.
        case privateKey(pem: String)
    }

    /// The key tokens are signed with.
    public var key: SigningKey
    /// The `kid` written in each token's header, naming the key a verifier checks it with; nil writes none.
    public var kid: String?

    /// A minter signing with `key`, naming it `kid` in the header when given.
    public init(key: SigningKey, kid: String? = nil) {
        self.key = key
        self.kid = kid
    }

    /// A signed token carrying `claims`.
    public func sign(_ claims: AccessClaims) async throws -> String {
        let collection = JWTKeyCollection()
        switch key {
        case .secret(let secret):
            guard secret.utf8.count >= 32 else { throw KeyError("an HS256 secret must be at least 32 bytes") }
            await collection.add(hmac: HMACKey(from: secret), digestAlgorithm: .sha256)
        case .privateKey(let pem):
            if let key = try? ES256PrivateKey(pem: pem) {
                await collection.add(ecdsa: key)
            } else if let key = try? Insecure.RSA.PrivateKey(pem: pem) {
                await collection.add(rsa: key, digestAlgorithm: .sha256)
            } else {
                throw KeyError("not a P-256 (ES256) or RSA (RS256) private key in PEM")
            }
        }
        var header = JWTHeader()
        if let kid { header.kid = kid }
        return try await collection.sign(claims, header: header)
    }
}
