import Foundation
import MeridianAuth
import MeridianServer
import MeridianSettings

extension Serve {
    /// The server's authentication from `auth` and the `jwt*` settings; reads the key files.
    static func authentication(_ o: EffectiveSettings) async throws -> Authentication {
        switch o.auth {
        case "none":
            return .none
        case "jwt":
            var keys: [VerificationKey] = []
            if let path = o.jwtSecretFile {
                let secret = try read(path, "jwtSecretFile").trimmingCharacters(in: .whitespacesAndNewlines)
                keys.append(.secret(secret))
            }
            if let path = o.jwtPublicKeyFile {
                let publicKeys = VerificationKey.publicKeys(fromPEMFile: try read(path, "jwtPublicKeyFile"))
                guard !publicKeys.isEmpty else { throw SettingError("jwtPublicKeyFile \(path): no PEM public key in it") }
                keys += publicKeys
            }
            guard !keys.isEmpty else {
                throw SettingError(
                    "auth jwt needs jwtSecretFile or jwtPublicKeyFile (or --auth none, for development on loopback only)")
            }
            do {
                return .tokens(try await TokenVerifier.make(keys: keys, audience: o.jwtAudience, issuer: o.jwtIssuer))
            } catch let error as KeyError {
                throw SettingError("JWT key: \(error.description)")
            }
        case let other:
            throw SettingError("auth \"\(other)\": use jwt or none")
        }
    }

    private static func read(_ path: String, _ key: String) throws -> String {
        do { return try String(contentsOfFile: path, encoding: .utf8) } catch {
            throw SettingError("\(key) \(path): cannot read it (\(error.localizedDescription))")
        }
    }
}
