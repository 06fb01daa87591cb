import ArgumentParser
import Foundation
import MeridianAuth

/// `meridian token`: mints a bearer token for development and tests.
struct Token: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Mint a bearer token (JWT) for a participant: HS256 with a secret file, or ES256/RS256 with a private key.")

    @Option(help: "File holding the HS256 secret (at least 32 bytes), as given to serve --jwt-secret-file.") var secretFile: String?
    @Option(help: "PEM file of an ES256 (P-256) or RS256 private key.") var privateKeyFile: String?
    @Option(help: "Key id (kid) to put in the header: the server names a public key by the `kid:` line before it in its PEM file, else by its RFC 7638 thumbprint; the HS256 secret has no kid.") var kid: String?
    @Option(help: "Participant id (sub).") var sub: String
    @Option(help: "Display name.") var name: String?
    @Option(help: "Session id, or a pattern with * (e.g. city-*, or * for all).") var session: String
    @Option(help: "owner, editor, viewer or dashboard (a hidden watcher).") var role: String
    @Option(help: "Seconds until the token expires.") var ttl: Int = 3_600
    @Option(help: "Audience (aud), when the server checks one.") var audience: String?
    @Option(help: "Issuer (iss), when the server checks one.") var issuer: String?

    func validate() throws {
        guard (secretFile == nil) != (privateKeyFile == nil) else { throw ValidationError("give exactly one of --secret-file and --private-key-file") }
        guard TokenRole(rawValue: role) != nil else { throw ValidationError("--role: use owner, editor, viewer or dashboard") }
        guard ttl > 0 else { throw ValidationError("--ttl must be positive") }
    }

    func run() async throws {
        let key: TokenMinter.SigningKey
        if let secretFile {
            key = .secret(try String(contentsOfFile: secretFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines))
        } else {
            key = .privateKey(pem: try String(contentsOfFile: privateKeyFile!, encoding: .utf8))
        }
        let now = Date()
        let claims = AccessClaims(
            subject: sub, name: name, session: session, role: TokenRole(rawValue: role)!, expires: now.addingTimeInterval(Double(ttl)),
            issuedAt: now, audience: audience, issuer: issuer)
        do {
            print(try await TokenMinter(key: key, kid: kid).sign(claims))
        } catch let error as KeyError {
            throw ValidationError(error.description)
        }
    }
}
