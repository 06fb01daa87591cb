import Foundation
import MeridianPostgres
import MeridianStorage
import Testing

/// The store over TLS, as managed PostgreSQL services require it: libpq's `sslmode` values
/// against a real server with a certificate of a test CA.
@Suite struct PostgresTLSTests {
    /// A CA and a server certificate for localhost and 127.0.0.1 signed by it, made with openssl.
    struct Certificates {
        let directory: String
        var ca: String { directory + "/ca.pem" }
        var serverCertificate: String { directory + "/server.pem" }
        var serverKey: String { directory + "/server.key" }

        init(in directory: String, name: String = "Meridian test CA") throws {
            self.directory = directory
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            try Self.openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", directory + "/ca.key", "-out", directory + "/ca.pem",
                              "-days", "2", "-subj", "/CN=\(name)"])
            try Self.openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", directory + "/server.key", "-out", directory + "/server.csr",
                              "-subj", "/CN=localhost"])
            try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(toFile: directory + "/san.ext", atomically: true, encoding: .utf8)
            try Self.openssl(["x509", "-req", "-in", directory + "/server.csr", "-CA", directory + "/ca.pem", "-CAkey", directory + "/ca.key",
                              "-CAcreateserial", "-out", directory + "/server.pem", "-days", "2", "-extfile", directory + "/san.ext"])
        }

        static func openssl(_ arguments: [String]) throws {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
            process.arguments = arguments
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            process.waitUntilExit()
            guard process.terminationStatus == 0 else { throw FixtureError("openssl \(arguments.first ?? "") failed") }
        }
    }

    /// A server of its own with TLS on (its key readable by the server's user only).
    static func tlsServer() throws -> (PostgresFixture, Certificates) {
        let postgres = try PostgresFixture()
        let certificates = try Certificates(in: postgres.directory + "/tls")
        for file in [certificates.directory, certificates.serverCertificate, certificates.serverKey] {
            try PostgresFixture.giveToPostgresUser(file)
        }
        chmod(certificates.serverKey, 0o600)
        try postgres.stop()
        postgres.options.withLock {
            $0 = ["-c", "ssl=on", "-c", "ssl_cert_file=\(certificates.serverCertificate)", "-c", "ssl_key_file=\(certificates.serverKey)"]
        }
        try postgres.start()
        return (postgres, certificates)
    }

    /// How many of the database's connections use TLS, and how many do not.
    static func connections(_ postgres: PostgresFixture, _ url: String) throws -> (tls: Int, plain: Int) {
        let database = String(url.split(separator: "?").first!.split(separator: "/").last!)
        let rows = try postgres.psql(postgres.url(database: "postgres"), """
            SELECT count(*) FILTER (WHERE s.ssl), count(*) FILTER (WHERE NOT s.ssl)
            FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.datname = '\(database)' AND a.application_name <> 'psql'
            """)
        let parts = rows.split(separator: "|").compactMap { Int($0) }
        return (parts.first ?? -1, parts.last ?? -1)
    }

    @Test func requireAndVerifyFullConnectOverTLS() throws {
        let (postgres, certificates) = try Self.tlsServer()
        defer { postgres.shutdown() }
        for query in ["sslmode=require", "sslmode=verify-ca&sslrootcert=\(certificates.ca)", "sslmode=verify-full&sslrootcert=\(certificates.ca)"] {
            let url = try postgres.createDatabase() + "?" + query
            let store = try PostgresSessionStore(url: url)
            try store.commit([.update(pinUpdate("s", 1))])
            #expect(try store.load("s")?.record.seq == 1, "\(query)")
            let seen = try Self.connections(postgres, url)
            #expect(seen.tls >= 1 && seen.plain == 0, "\(query): \(seen)")
        }
    }

    @Test func aServerCertificateOfAnotherCAOrAnotherHostIsRefused() throws {
        let (postgres, _) = try Self.tlsServer()
        defer { postgres.shutdown() }
        let other = try Certificates(in: postgres.directory + "/other", name: "Another CA")
        let url = try postgres.createDatabase()
        let wrongCA = #expect(throws: StorageError.self) { try PostgresSessionStore(url: url + "?sslmode=verify-ca&sslrootcert=\(other.ca)") }
        #expect(wrongCA?.isCannotOpen == true, "\(String(describing: wrongCA))")
        // verify-full checks the host name: the certificate names localhost and 127.0.0.1, not ::ffff:7f00:1's "127.0.0.2".
        let wrongHost = #expect(throws: StorageError.self) {
            try PostgresSessionStore(url: url.replacingOccurrences(of: "127.0.0.1", with: "127.0.0.2") + "?sslmode=verify-full&sslrootcert=\(other.ca)")
        }
        #expect(wrongHost?.isCannotOpen == true)
    }

    @Test func requireAgainstAServerWithoutTLSIsRefusedAndPreferFallsBack() throws {
        let url = try PostgresFixture.database()
        let refused = #expect(throws: StorageError.self) { try PostgresSessionStore(url: url + "?sslmode=require", connectTimeout: .seconds(3)) }
        #expect(refused?.isCannotOpen == true, "\(String(describing: refused))")
        let store = try PostgresSessionStore(url: url + "?sslmode=prefer")
        try store.commit([.update(pinUpdate("s", 1))])
        #expect(try store.load("s")?.record.seq == 1)
    }

    @Test func tlsParametersAreCheckedByName() throws {
        let url = try PostgresFixture.database()
        for (query, reason) in [
            ("sslmode=maybe", "sslmode=maybe: use disable, allow, prefer, require, verify-ca or verify-full"),
            ("sslcert=/x.pem", "sslcert and sslkey go together"),
            ("sslmode=verify-full&sslrootcert=/nonexistent/ca.pem", "TLS:"),
            ("application_name=x", "unsupported parameter application_name=x"),
        ] {
            let error = #expect(throws: StorageError.self, "\(query)") { try PostgresSessionStore(url: url + "?" + query) }
            #expect(error?.message.contains(reason) == true, "\(query): \(error?.message ?? "")")
        }
    }
}
