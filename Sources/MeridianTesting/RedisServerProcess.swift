import Foundation
import Glibc
import MeridianSync

/// A real `redis-server` for tests: its own process on a free loopback port, no persistence,
/// in a temporary directory. Started ready (it printed that it accepts connections); stopped,
/// paused or restarted on the same port by the test.
public final class RedisServerProcess: Sendable {
    /// The loopback port it listens on (TLS only when `tls` is set); the same across restarts.
    public let port: Int
    private let directory: URL
    private let process = Locked<Process?>(nil)
    /// More `redis-server` options (a password, ACL users).
    private let options: [String]
    /// With TLS: the certificates it serves with; then its port speaks TLS only.
    public let tls: TestCertificates?

    /// Starts a server (`redis-server` from PATH or /usr/bin), with `options` besides its own.
    /// With `tls` it listens for TLS only, with the server certificate of `tls`, and asks for a
    /// client certificate signed by its CA when `clientCertificates`.
    public init(options: [String] = [], tls: TestCertificates? = nil, clientCertificates: Bool = false) throws {
        port = try Self.freePort()
        self.tls = tls
        var options = options
        if let tls {
            options = [
                "--port", "0", "--tls-port", String(port), "--tls-cert-file", tls.serverCertificate, "--tls-key-file", tls.serverKey,
                "--tls-ca-cert-file", tls.ca, "--tls-auth-clients", clientCertificates ? "yes" : "no",
            ] + options
        }
        self.options = options
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("meridian-redis-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try start()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Its URL; over TLS with the test CA (`rediss://…?cacert=`).
    public var url: String {
        guard let tls else { return "redis://127.0.0.1:\(port)" }
        return "rediss://127.0.0.1:\(port)?cacert=\(tls.ca)"
    }

    /// Starts the server again (after ``stop()``) on the same port, and returns once it is ready.
    public func start() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = [
            "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
            "--dir", directory.path, "--daemonize", "no", "--loglevel", "notice",
        ] + options
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process.withLock { $0 = process }
        // Ready once it says so; the rest of its output is drained so that it never blocks on it.
        let handle = output.fileHandleForReading
        var seen = Data()
        while !String(decoding: seen, as: UTF8.self).contains("Ready to accept connections") {
            let chunk = handle.availableData
            guard !chunk.isEmpty else {
                throw RedisServerError("redis-server on port \(port) ended before it was ready: \(String(decoding: seen, as: UTF8.self).suffix(500))")
            }
            seen.append(chunk)
        }
        Thread.detachNewThread { while !handle.availableData.isEmpty {} }
    }

    /// Stops the server (SIGKILL: it keeps nothing anyway) and waits for it to end.
    public func stop() {
        guard let process = process.withLock({ $0.take() }) else { return }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    /// Freezes (SIGSTOP) or thaws (SIGCONT) the server: connections stay open but get no answer.
    public func pause() { signal(SIGSTOP) }
    /// Thaws the server after ``pause()`` (SIGCONT): it answers its connections again.
    public func resume() { signal(SIGCONT) }

    private func signal(_ number: Int32) {
        if let pid = process.withLock({ $0?.processIdentifier }) { kill(pid, number) }
    }

    private static var binary: String {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":") + ["/usr/bin", "/usr/sbin"] {
            let candidate = "\(directory)/redis-server"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return "/usr/bin/redis-server"
    }

    /// A loopback port that was free a moment ago (bound to port 0, then released).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RedisServerError("socket: \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw RedisServerError("cannot find a free port: \(errno)") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Why a `redis-server` for a test could not be started (no free port, or it ended before it was ready).
public struct RedisServerError: Error, CustomStringConvertible {
    /// What failed, with the server's last output where there was some.
    public var description: String
    init(_ description: String) { self.description = description }
}
