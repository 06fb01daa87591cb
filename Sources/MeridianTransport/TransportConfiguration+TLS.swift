#if canImport(Glibc)
import Glibc
#endif
import MeridianTransportCore

extension TransportConfiguration {
    /// Throws ``TransportError/invalidConfiguration(_:)`` unless TLS is off, or both the
    /// certificate and the key are set and readable.
    func validateTLSFiles() throws {
        guard usesTLS else {
            if tlsClientCAPath != nil { throw TransportError.invalidConfiguration("a client CA needs TLS: set the certificate and key too") }
            return
        }
        guard let certificate = tlsCertificatePath, let key = tlsPrivateKeyPath else {
            throw TransportError.invalidConfiguration("TLS needs both a certificate and a private key file")
        }
        let files = [("certificate", certificate), ("private key", key)] + (tlsClientCAPath.map { [("client CA", $0)] } ?? [])
        for (what, path) in files where access(path, R_OK) != 0 {
            let reason = String(cString: strerror(errno))
            throw TransportError.invalidConfiguration("cannot read the TLS \(what) \(path): \(reason)")
        }
    }
}
