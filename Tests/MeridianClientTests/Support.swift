import Foundation
import Logging
import MeridianClient
import MeridianClientTransport
import MeridianCore
import MeridianServer
import MeridianTesting
import Testing

/// Records a client's updates and lets a test wait for a condition on them or on its mirror.
final class Recorder: MeridianClientDelegate, @unchecked Sendable {
    private let condition = NSCondition()
    private var recorded: [ClientUpdate] = []
    private var applied: [SequencedEvent] = []

    func client(_ client: MeridianClient, didApply event: SequencedEvent) {
        record { applied.append(event) }
    }

    var events: [SequencedEvent] { condition.withLock { applied } }

    /// Waits until `predicate` holds of the events applied, re-checking on each; false after `timeout`.
    @discardableResult
    func waitForEvents(timeout: TimeInterval = 10, _ predicate: ([SequencedEvent]) -> Bool) -> Bool {
        waitUntil(timeout: timeout) { predicate(applied) }
    }

    func client(_ client: MeridianClient, didReceive update: ClientUpdate) {
        record { recorded.append(update) }
    }

    var updates: [ClientUpdate] { condition.withLock { recorded } }

    /// Waits until `predicate` holds, re-checking on every update; false after `timeout`.
    @discardableResult
    func wait(timeout: TimeInterval = 10, _ predicate: ([ClientUpdate]) -> Bool) -> Bool {
        waitUntil(timeout: timeout) { predicate(recorded) }
    }

    private func record(_ change: () -> Void) {
        condition.lock()
        change()
        condition.broadcast()
        condition.unlock()
    }

    /// Waits, under the lock, until `holds` is true, re-checking whenever something is recorded;
    /// `timeout` is stretched by `MERIDIAN_TEST_SLOWDOWN` (ThreadSanitizer).
    private func waitUntil(timeout: TimeInterval, _ holds: () -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout * Double(testSlowdown))
        condition.lock()
        defer { condition.unlock() }
        while !holds() {
            if !condition.wait(until: deadline) { return holds() }
        }
        return true
    }
}

/// The wire these tests run over, from `MERIDIAN_CLIENT_WIRE`: `lws` (the default), `lws-tls`,
/// `nio` or `nio-tls`. Over TLS the server has a certificate from a CA of the tests' own and
/// requires a client certificate from it too, so the CA and client certificate settings are in
/// every test. Run the TLS wires with `--no-parallel`: libwebsockets 4.1 replaces a library-wide
/// index with each TLS context it makes (each test's server, each of its client connections),
/// which a handshake in flight elsewhere in the process would miss (``TransportChoice/automatic``).
enum Wire {
    static let name = ProcessInfo.processInfo.environment["MERIDIAN_CLIENT_WIRE"] ?? "lws"
    static var secure: Bool { name.hasSuffix("-tls") }
    static var choice: TransportChoice { name.hasPrefix("nio") ? .portable : .libwebsockets }
    static let certificates: TestCertificates? = secure ? (try? TestCertificates()) : nil

    static var tls: ClientTLS {
        guard let c = certificates else { return ClientTLS() }
        return ClientTLS(caFile: c.ca, certificateFile: c.clientCertificate, privateKeyFile: c.clientKey, serverName: "localhost")
    }

    static func url(_ port: Int) -> String { "\(secure ? "wss" : "ws")://127.0.0.1:\(port)/" }

    /// A transport to the test server on `port`, over this wire.
    static func transport(port: Int, token: String? = nil) -> any ClientTransport {
        let endpoint = try! ServerEndpoint(url: url(port))
        let headers = token.map { ["Authorization": "Bearer \($0)"] } ?? [:]
        switch choice {
        case .portable: return try! NIOClientTransport(url: url(port), tls: tls, headers: headers)
        default: return LWSClientTransport(endpoint: endpoint, tls: tls, headers: headers)
        }
    }
}

extension TestServer {
    /// A server in this process, listening over ``Wire``: with TLS and client certificates for `-tls`.
    static func overWire(_ configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> TestServer {
        guard Wire.secure, let c = Wire.certificates else { return try TestServer(configure) }
        return try TestServer {
            $0.transport.tlsCertificatePath = c.serverCertificate
            $0.transport.tlsPrivateKeyPath = c.serverKey
            $0.transport.tlsClientCAPath = c.ca
            configure(&$0)
        }
    }
}

extension MeridianClient {
    /// A client of `server` over ``Wire``.
    convenience init(over server: TestServer, configuration: ClientConfiguration) {
        try! self.init(url: Wire.url(server.port), configuration: configuration, tls: Wire.tls, transport: Wire.choice)
    }
}

/// A transport over ``Wire`` whose reading can be paused, so the server sees a slow consumer.
final class PausableTransport: ClientTransport {
    let inner: any ClientTransport
    init(port: Int) { inner = Wire.transport(port: port) }
    func connect(timeout: Duration) throws { try inner.connect(timeout: timeout) }
    func send(_ text: String) { inner.send(text) }
    func receive(timeout: Duration) throws -> TransportMessage { try inner.receive(timeout: timeout) }
    func close() { inner.close() }
    func pauseReading() {
        if let nio = inner as? NIOClientTransport { nio.pauseReading() } else { (inner as? LWSClientTransport)?.pauseReading() }
    }
    func resumeReading() {
        if let nio = inner as? NIOClientTransport { nio.resumeReading() } else { (inner as? LWSClientTransport)?.resumeReading() }
    }
}

/// Makes the server send everyone one message (`watcher`'s own camera): the portable
/// transport's pause takes hold after the message it is waiting for, if any.
func nudge(_ watcher: MeridianClient) async throws {
    try await watcher.send(.cameraEnd(camera: Camera(center: Coordinate(latitude: 10, longitude: 10), zoom: 3)))
}

/// Hands out transports and remembers the latest, for tests that pause it. While not
/// `online` they go to a port nobody listens on (every reconnect is refused).
final class TransportBox: @unchecked Sendable {
    private let lock = NSLock()
    private var latest: PausableTransport?
    private var isOnline = true
    let port: Int
    init(port: Int) { self.port = port }
    var online: Bool {
        get { lock.withLock { isOnline } }
        set { lock.withLock { isOnline = newValue } }
    }
    func make() -> any ClientTransport {
        let t = PausableTransport(port: online ? port : 1)
        lock.withLock { latest = t }
        return t
    }
    var current: PausableTransport? { lock.withLock { latest } }
}

func point(_ id: String, _ lat: Double, _ lon: Double, metadata: [String: JSONValue] = [:]) -> JSONValue {
    .object([
        "id": .string(id), "type": .string("point"), "draggable": .bool(true),
        "coordinate": .object(["latitude": .number(lat), "longitude": .number(lon)]),
        "title": .string(id), "canShowCallout": .bool(true), "metadata": .object(metadata),
    ])
}

