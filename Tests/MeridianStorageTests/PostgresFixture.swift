import Foundation
import MeridianSync

#if canImport(Glibc)
import Glibc
#endif

/// A PostgreSQL server of the tests' own, in a fresh temporary directory on a free loopback
/// port: `initdb` (trust authentication, user `meridian`, no fsync), then `postgres`, ready
/// once `pg_isready` answers. It can be stopped and started again on the same port and data
/// (the fault tests), and is removed by ``shutdown()``.
///
/// initdb and postgres refuse to run as root: as root they run as the `postgres` user
/// (`runuser`), in a directory given to that user. The binaries are PostgreSQL's own
/// (`pg_config --bindir`, else the newest /usr/lib/postgresql/*/bin); no system service is used.
final class PostgresFixture: @unchecked Sendable {
    let directory: String
    let port: Int
    let binaries: String
    private let server = Locked<Process?>(nil)
    /// More `postgres` options, for the next start (TLS).
    let options = Locked<[String]>([])
    private var data: String { directory + "/data" }
    private var logPath: String { directory + "/postgres.log" }

    /// One server for every test of the process that only needs a database of its own
    /// (``database()``); shut down when the process exits.
    static let shared: Result<PostgresFixture, FixtureError> = {
        do {
            let fixture = try PostgresFixture()
            atexit { PostgresFixture.sharedForExit?.shutdown() }
            return .success(fixture)
        } catch {
            return .failure(error as? FixtureError ?? FixtureError("\(error)"))
        }
    }()

    private static var sharedForExit: PostgresFixture? { try? shared.get() }

    /// A new empty database on the shared server, as a `postgres://` URL.
    static func database() throws -> String {
        try shared.get().createDatabase()
    }

    init() throws {
        binaries = try Self.findBinaries()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("meridian-pg-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        do {
            try Self.giveToPostgresUser(directory)
            port = try Self.freePort()
            try run("initdb", ["-D", data, "--auth=trust", "-U", "meridian", "--encoding=UTF8", "--no-sync"], asServer: true)
            try start()
        } catch {
            try? FileManager.default.removeItem(atPath: directory)
            throw error
        }
    }

    /// `postgres://meridian@127.0.0.1:PORT/name`.
    func url(database name: String) -> String { "postgres://meridian@127.0.0.1:\(port)/\(name)" }

    /// Creates an empty database and returns its URL.
    func createDatabase() throws -> String {
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try run("createdb", ["-h", "127.0.0.1", "-p", "\(port)", "-U", "meridian", name], asServer: false)
        return url(database: name)
    }

    /// Runs `sql` with psql in the database of `url` (one of this server's) and returns what
    /// it prints: rows unaligned, without headers.
    @discardableResult
    func psql(_ url: String, _ sql: String) throws -> String {
        try run("psql", psqlArguments(url, sql), asServer: false).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// psql running `sql` in the database of `url` as client `name` (its `application_name`),
    /// started and left running; ``endSessions(of:)`` ends its session on the server.
    func psqlInBackground(_ url: String, _ sql: String, as name: String) throws -> Process {
        let process = try command("psql", psqlArguments(url, sql), asServer: false)
        process.environment = ProcessInfo.processInfo.environment.merging(["PGAPPNAME": name]) { $1 }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return process
    }

    /// Ends the server sessions of client `name` (their transactions roll back) and returns how many.
    @discardableResult
    func endSessions(of name: String) throws -> Int {
        let ended = try psql(url(database: "postgres"), "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = '\(name)'")
        return Int(ended) ?? 0
    }

    private func psqlArguments(_ url: String, _ sql: String) -> [String] {
        let database = String(url.split(separator: "/").last ?? "postgres")
        return ["-h", "127.0.0.1", "-p", "\(port)", "-U", "meridian", "-d", database, "-X", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-c", sql]
    }

    /// Starts the server (again) on `port` and returns once it accepts connections.
    func start() throws {
        let process = try command("postgres", [
            "-D", data, "-p", "\(port)", "-k", directory, "-c", "listen_addresses=127.0.0.1",
            "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
        ] + options.withLock { $0 }, asServer: true)
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        try process.run()
        try? log.close()
        server.withLock { $0 = process }
        // A bounded poll: PostgreSQL says nothing when it is ready but through the socket.
        let deadline = Date(timeIntervalSinceNow: 60)
        while Date() < deadline {
            guard process.isRunning else { throw FixtureError("postgres exited at start: \(logTail())") }
            if (try? run("pg_isready", ["-h", "127.0.0.1", "-p", "\(port)", "-U", "meridian", "-t", "2"], asServer: false)) != nil { return }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw FixtureError("postgres not ready within 60 s: \(logTail())")
    }

    /// Stops the server (fast shutdown: sessions end at once) and waits until it has exited.
    func stop() throws {
        guard let process = server.withLock({ $0 }), process.isRunning else { return }
        try run("pg_ctl", ["stop", "-D", data, "-m", "fast", "-w", "-t", "60"], asServer: true)
        process.waitUntilExit()
        server.withLock { $0 = nil }
    }

    /// Stops the server and removes its directory.
    func shutdown() {
        try? stop()
        if let process = server.withLock({ $0 }), process.isRunning {
            process.terminate()
            process.waitUntilExit()
        }
        try? FileManager.default.removeItem(atPath: directory)
    }

    private func logTail() -> String {
        String((try? String(contentsOfFile: logPath, encoding: .utf8))?.suffix(2_000) ?? "")
    }

    // MARK: Processes

    private static var isRoot: Bool { getuid() == 0 }

    /// `tool` of PostgreSQL's binaries with `arguments`; as the `postgres` user when root and `asServer`.
    private func command(_ tool: String, _ arguments: [String], asServer: Bool) throws -> Process {
        let process = Process()
        let path = binaries + "/" + tool
        if asServer && Self.isRoot {
            process.executableURL = URL(fileURLWithPath: try Self.runuser())
            process.arguments = ["-u", "postgres", "--", path] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: path)
            process.arguments = arguments
        }
        process.standardInput = FileHandle.nullDevice
        return process
    }

    /// Runs `tool` to its end; throws its output if it fails.
    @discardableResult
    private func run(_ tool: String, _ arguments: [String], asServer: Bool) throws -> String {
        let process = try command(tool, arguments, asServer: asServer)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw FixtureError("\(tool) \(arguments.joined(separator: " ")) failed (\(process.terminationStatus)): \(text)")
        }
        return text
    }

    private static func runuser() throws -> String {
        guard let path = ["/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"].first(where: FileManager.default.isExecutableFile)
        else { throw FixtureError("runuser not found: PostgreSQL cannot run as root") }
        return path
    }

    /// PostgreSQL's binary directory: `pg_config --bindir`, else the newest /usr/lib/postgresql/*/bin.
    private static func findBinaries() throws -> String {
        let pgConfig = Process()
        pgConfig.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        pgConfig.arguments = ["pg_config", "--bindir"]
        let output = Pipe()
        pgConfig.standardOutput = output
        pgConfig.standardError = FileHandle.nullDevice
        if (try? pgConfig.run()) != nil {
            let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            pgConfig.waitUntilExit()
            let bin = text.trimmingCharacters(in: .whitespacesAndNewlines)
            if pgConfig.terminationStatus == 0, FileManager.default.isExecutableFile(atPath: bin + "/initdb") { return bin }
        }
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        for version in versions.sorted(by: { (Int($0) ?? 0) > (Int($1) ?? 0) }) {
            let bin = "/usr/lib/postgresql/\(version)/bin"
            if FileManager.default.isExecutableFile(atPath: bin + "/initdb") { return bin }
        }
        throw FixtureError("PostgreSQL not found (no pg_config, nothing in /usr/lib/postgresql): make test-deps installs it")
    }

    /// As root, `path` becomes the `postgres` user's: initdb and postgres run as that user.
    static func giveToPostgresUser(_ path: String) throws {
        guard isRoot else { return }
        guard let user = getpwnam("postgres") else { throw FixtureError("no postgres user to run PostgreSQL as") }
        guard chown(path, user.pointee.pw_uid, user.pointee.pw_gid) == 0 else {
            throw FixtureError("cannot give \(path) to postgres: \(String(cString: strerror(errno)))")
        }
    }

    /// A loopback TCP port nobody listens on now.
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw FixtureError("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sockaddr in
                bind(fd, sockaddr, length) == 0 && getsockname(fd, sockaddr, &length) == 0
            }
        }
        guard bound else { throw FixtureError("bind: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}

/// Why the fixture could not give a server.
struct FixtureError: Error, Sendable, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
