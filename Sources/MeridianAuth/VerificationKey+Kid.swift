import Crypto
import Foundation
import JWTKit

/// Key ids (`kid`): how a configured key is named, so that a token's `kid` picks it.
extension VerificationKey {
    /// The public keys of a PEM file (`--jwt-public-key-file`), in file order. A line
    /// `kid: NAME` before a key's `-----BEGIN …-----` line names that key (text outside the
    /// encapsulation boundaries, which PEM readers ignore: RFC 7468 §5.2); a key without one is
    /// named by its RFC 7638 thumbprint when the verifier is made.
    public static func publicKeys(fromPEMFile text: String) -> [VerificationKey] {
        var keys: [VerificationKey] = [], block: [Substring]?, label: String?
        for line in text.split(whereSeparator: \.isNewline) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if block == nil, trimmed.lowercased().hasPrefix("kid:") {
                let name = trimmed.dropFirst(4).trimmingCharacters(in: .whitespaces)
                label = name.isEmpty ? nil : name
            } else if trimmed.hasPrefix("-----BEGIN ") {
                block = [Substring(trimmed)]
            } else if block != nil {
                block!.append(Substring(trimmed))
            }
            if trimmed.hasPrefix("-----END "), let lines = block {
                keys.append(.publicKey(pem: lines.joined(separator: "\n") + "\n", kid: label))
                block = nil
                label = nil
            }
        }
        return keys
    }

    /// The kid tokens name this key by: the one it was given, else for a public key its RFC 7638
    /// JWK thumbprint, else (an HS256 secret) none.
    func resolvedKid() throws -> String? {
        if let kid { return kid }
        guard case .publicKey(let pem, _) = self else { return nil }
        return try Self.thumbprint(ofPublicKeyPEM: pem)
    }

    /// The RFC 7638 thumbprint of a P-256 or RSA public key: base64url of the SHA-256 of its
    /// required JWK members, in lexicographic order and without white space.
    public static func thumbprint(ofPublicKeyPEM pem: String) throws -> String {
        let members: String
        if let key = try? ES256PublicKey(pem: pem), let point = key.parameters {
            members = #"{"crv":"P-256","kty":"EC","x":"\#(point.x)","y":"\#(point.y)"}"#
        } else if let key = try? Insecure.RSA.PublicKey(pem: pem) {
            let (modulus, exponent) = try key.getKeyPrimitives()
            members = #"{"e":"\#(base64URL(exponent.drop { $0 == 0 }))","kty":"RSA","n":"\#(base64URL(modulus.drop { $0 == 0 }))"}"#
        } else {
            throw KeyError("not a P-256 (ES256) or RSA (RS256, 2048+ bits) public key in PEM")
        }
        return base64URL(Data(SHA256.hash(data: Data(members.utf8))))
    }
}

/// Unpadded base64url.
func base64URL(_ bytes: some DataProtocol) -> String {
    Data(bytes).base64EncodedString()
        .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}
