import Foundation

/// A certificate authority of its own and two certificates it signed, made with the openssl
/// command in a fresh directory: the server's (for `localhost`, and 127.0.0.1 unless told
/// otherwise) and a client's.
public struct TestCertificates: Sendable {
    /// The scratch directory holding the keys, certificates and signing requests.
    public let directory: URL
    /// Path of the CA's certificate (PEM), for a peer that verifies against it.
    public var ca: String { path("ca.pem") }
    /// Path of the server's certificate (PEM), CN `localhost`.
    public var serverCertificate: String { path("server.pem") }
    /// Path of the server's private key (PEM, P-256).
    public var serverKey: String { path("server.key") }
    /// Path of the client's certificate (PEM), CN `meridian-test-client`, for client authentication.
    public var clientCertificate: String { path("client.pem") }
    /// Path of the client's private key (PEM, P-256).
    public var clientKey: String { path("client.key") }

    /// Makes the CA and signs the two certificates, valid for two days; `serverAddress: false` leaves 127.0.0.1 out of the server's names. Throws ``CertificateError`` if openssl fails.
    public init(serverAddress: Bool = true) throws {
        directory = try TestScratch.directory("certificates")
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        try openssl(["req", "-x509"] + ec + ["-keyout", path("ca.key"), "-out", ca, "-days", "2", "-subj", "/CN=Meridian test CA"])
        for (name, cn, extensions) in [
            ("server", "localhost", "subjectAltName=DNS:localhost\(serverAddress ? ",IP:127.0.0.1" : "")\nextendedKeyUsage=serverAuth\n"),
            ("client", "meridian-test-client", "extendedKeyUsage=clientAuth\n"),
        ] {
            try extensions.write(toFile: path("\(name).ext"), atomically: true, encoding: .utf8)
            try openssl(["req"] + ec + ["-keyout", path("\(name).key"), "-out", path("\(name).csr"), "-subj", "/CN=\(cn)"])
            try openssl(["x509", "-req", "-in", path("\(name).csr"), "-CA", ca, "-CAkey", path("ca.key"), "-CAcreateserial",
                         "-out", path("\(name).pem"), "-days", "2", "-extfile", path("\(name).ext")])
        }
    }

    private func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    private func openssl(_ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["openssl"] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CertificateError(command: arguments.prefix(2).joined(separator: " ")) }
    }
}

/// The openssl command failed.
public struct CertificateError: Error, CustomStringConvertible {
    /// The openssl subcommand that failed (its first two arguments, e.g. `req -x509`).
    public let command: String
    /// The failure as text: `openssl <command> failed`.
    public var description: String { "openssl \(command) failed" }
}
