#if canImport(Glibc)
import Glibc
#endif
import MeridianTransportCore

extension TransportConfiguration {
    /// Throws ``TransportError/invalidConfiguration(_:)`` unless TLS is off, or both the
    /// certificate and the key are set and readable.
    func validateTLSFiles() throws {
        guard usesTLS else { return }
        guard let certificate = tlsCertificatePath, let key = tlsPrivateKeyPath else {
            throw TransportError.invalidConfiguration("TLS needs both a certificate and a private key file")
        }
        for (what, path) in [("certificate", certificate), ("private key", key)] where access(path, R_OK) != 0 {
            let reason = String(cString: strerror(errno))
            throw TransportError.invalidConfiguration("cannot read the TLS \(what) \(path): \(reason)")
        }
    }
}
