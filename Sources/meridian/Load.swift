import ArgumentParser
import Foundation
import MeridianAuth
import MeridianClientTransport
import MeridianLoad
import MeridianTransportCore

/// `meridian load`: simulated clients against a running server, with a latency report.
struct Load: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Load-test a Meridian server with simulated clients (drags, cameras, selections, churn).")

    @Option(help: "Server address.") var host = "127.0.0.1"
    @Option(help: "Server port.") var port = 8080
    @Option(help: "The server as a URL, instead of --host and --port: ws://HOST:PORT or wss://HOST:PORT (TLS).")
    var url: String?
    @Option(help: "With wss://: PEM file of the certificate authorities to trust (default: the system's).")
    var caFile: String?
    @Option(help: "With wss://: the name the server's certificate must carry, also sent as SNI (default: the URL's host).")
    var serverName: String?
    @Option(help: "With wss://: PEM client certificate and key files, for a server that requires one.")
    var clientCert: String?
    @Option(help: "PEM private key of --client-cert.") var clientKey: String?
    @Option(help: "Comma-separated server ports the clients connect to in turn (the nodes of a cluster on this host); the seeder uses --port.")
    var ports: String?
    @Option(help: "Simulated clients in all.") var clients = 100
    @Option(help: "Sessions the clients are spread over.") var sessions = 1
    @Option(help: "Draggers per session.") var draggers = 2
    @Option(help: "Sessions with draggers (the first ones; default all): the others only listen.") var dragSessions: Int?
    @Option(help: "Drag moves per second per dragger.") var rate = 60.0
    @Option(help: "Moves per drag before it ends and a new one starts.") var movesPerDrag = 60
    @Flag(help: "Spread the draggers' moves over the move interval, as independent users move (by default they move in step, in bursts).")
    var stagger = false
    @Option(help: "Fraction of draggers that compete for an annotation with another.") var contention = 0.2
    @Option(help: "Camera movers per session.") var cameraMovers = 0
    @Option(help: "Camera updates per second per mover.") var cameraRate = 10.0
    @Option(help: "Clients per session that change their selection.") var selectors = 0
    @Option(help: "Seconds between selection changes.") var selectInterval = 2.0
    @Option(help: "Listeners per second (in all) that leave and join again.") var churn = 0.0
    @Option(help: "Annotations added to each session before the clients join.") var annotations = 0
    @Option(help: "What the clients receive: everything, or viewport (a big map: each client watches its own city at zoom 12, where the annotations and its drags lie; at most 1000 moves per drag, no contention).")
    var interest = "everything"
    @Option(help: "Seconds over which the clients connect.") var rampUp = 1.0
    @Option(help: "Seconds after the ramp-up before measuring.") var settle = 1.0
    @Option(help: "Seconds measured after the ramp-up and settling.") var duration = 10.0
    @Option(help: "Client threads (each drives its share of connections).") var threads = 1
    @Option(help: "Shortest time between two polls of a thread's sockets, in ms (fewer, fuller wake-ups; 0 polls at once).")
    var coalesceMs = 2.0
    @Option(help: "Comma-separated local addresses the connections are bound to in turn (e.g. 127.0.0.1,127.0.0.2: one source address has about 28k ports towards one server address).")
    var sourceAddresses: String?
    @Option(help: "Event loop of the client threads: libev (default) or poll.") var eventLoop = "libev"
    @Option(help: "Exit non-zero when the drag latency p99 exceeds this many milliseconds.") var maxP99: Double?
    @Option(help: "Exit non-zero when more than this many events are lost.") var maxLoss: UInt64?
    @Option(help: "HS256 secret file of a server that checks tokens: each client gets its own token (sub load-N, sessions load-*).")
    var jwtSecretFile: String?
    @Flag(help: "Print the final report as JSON on stdout.") var json = false
    @Flag(help: "No progress lines on stderr.") var quiet = false

    /// Host, port and TLS from `--url` and the TLS options.
    private func apply(url: String, to c: inout LoadConfiguration) throws {
        guard let parts = URLComponents(string: url), let scheme = parts.scheme?.lowercased(), ["ws", "wss"].contains(scheme),
              let host = parts.host, !host.isEmpty else {
            throw ValidationError("--url: expected ws://HOST:PORT or wss://HOST:PORT")
        }
        c.host = host
        c.port = parts.port ?? (scheme == "wss" ? 443 : 80)
        guard scheme == "wss" else {
            guard caFile == nil, serverName == nil, clientCert == nil else { throw ValidationError("--ca-file, --server-name and --client-cert need a wss:// --url") }
            return
        }
        guard (clientCert == nil) == (clientKey == nil) else { throw ValidationError("--client-cert and --client-key go together") }
        for file in [caFile, clientCert, clientKey].compactMap({ $0 }) where !FileManager.default.isReadableFile(atPath: file) {
            throw ValidationError("cannot read \(file)")
        }
        c.tls = WebSocketClient.TLS(caFilePath: caFile, serverName: serverName, certificateFilePath: clientCert, privateKeyFilePath: clientKey)
    }

    func validate() throws {
        guard clients >= 1, sessions >= 1, sessions <= clients else { throw ValidationError("need 1 <= --sessions <= --clients") }
        guard draggers >= 0, rate > 0, (1...MoveCounter.maxMoves).contains(movesPerDrag) else {
            throw ValidationError("--draggers >= 0, --rate > 0, 1 <= --moves-per-drag <= \(MoveCounter.maxMoves)")
        }
        if let dragSessions, dragSessions < 0 { throw ValidationError("--drag-sessions must not be negative") }
        guard (0...1).contains(contention) else { throw ValidationError("--contention must be within 0...1") }
        guard duration > 0, rampUp >= 0, settle >= 0, threads >= 1 else { throw ValidationError("--duration > 0, --ramp-up >= 0, --settle >= 0, --threads >= 1") }
        guard (0...100).contains(coalesceMs) else { throw ValidationError("--coalesce-ms must be within 0...100") }
    }

    func run() async throws {
        var c = LoadConfiguration()
        if let jwtSecretFile { c.tokens = try await tokens(secretFile: jwtSecretFile) }
        c.host = host
        c.port = port
        if let url { try apply(url: url, to: &c) }
        if let ports {
            c.ports = try ports.split(separator: ",").map { text in
                guard let port = Int(text.trimmingCharacters(in: .whitespaces)), (1...65_535).contains(port) else {
                    throw ValidationError("--ports: comma-separated port numbers")
                }
                return port
            }
        }
        c.clients = clients
        c.sessions = sessions
        c.draggers = draggers
        c.dragSessions = dragSessions
        c.dragRate = rate
        c.movesPerDrag = movesPerDrag
        c.stagger = stagger
        c.contention = contention
        c.cameraMovers = cameraMovers
        c.cameraRate = cameraRate
        c.selectors = selectors
        c.selectInterval = selectInterval
        c.churnRate = churn
        c.annotations = annotations
        guard let interest = LoadInterest(rawValue: interest) else { throw ValidationError("--interest: use everything or viewport") }
        c.interest = interest
        c.rampUp = rampUp
        c.settle = settle
        c.duration = duration
        c.threads = threads
        c.coalescing = .microseconds(Int(coalesceMs * 1000))
        guard let loop = EventLoop(rawValue: eventLoop) else { throw ValidationError("--event-loop: use libev or poll") }
        c.eventLoop = loop
        c.sourceAddresses = (sourceAddresses ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let quiet = quiet
        let report = try LoadRunner.run(c) { line in
            if !quiet { FileHandle.standardError.write(Data((line + "\n").utf8)) }
        }
        print(json ? report.json : report.text)
        var failures: [String] = []
        if let maxP99, report.latencyMs.p99 > maxP99 {
            failures.append("p99 \(report.latencyMs.p99) ms exceeds --max-p99 \(maxP99)")
        }
        if let maxLoss, report.lost > maxLoss { failures.append("\(report.lost) events lost, more than --max-loss \(maxLoss)") }
        if !failures.isEmpty {
            FileHandle.standardError.write(Data((failures.joined(separator: "\n") + "\n").utf8))
            throw ExitCode(2)
        }
    }

    /// One editor token per client and per seeder, valid for the whole run.
    private func tokens(secretFile: String) async throws -> @Sendable (Int) -> String {
        let secret = try String(contentsOfFile: secretFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        let minter = TokenMinter(key: .secret(secret))
        let expires = Date().addingTimeInterval(rampUp + settle + duration + 3_600)
        var tokens: [String] = []
        for i in 0..<(clients + sessions) {
            tokens.append(try await minter.sign(AccessClaims(subject: "load-\(i)", name: nil, session: "load-*", role: .editor, expires: expires)))
        }
        let all = tokens
        return { all[$0] }
    }
}
