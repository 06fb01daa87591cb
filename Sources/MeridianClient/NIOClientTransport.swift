import Foundation
import HTTPTypes
import Logging
import MeridianSync
import NIOCore
import NIOPosix
import NIOSSL
import NIOWebSocket
import WSClient
#if canImport(Network)
import NIOTransportServices
#endif

/// The portable transport: swift-websocket's client on SwiftNIO, so the same client builds for
/// iOS, macOS and Linux. `wss://` goes through NIOSSL with the system's roots or a CA file of
/// one's own, and a client certificate when the server asks for one; on Apple platforms the
/// sockets are Network.framework's (NIO Transport Services). The default transport on Apple
/// platforms and for `wss://` (``TransportChoice/automatic``).
///
/// No compression is offered: the server does not negotiate permessage-deflate.
public final class NIOClientTransport: ClientTransport {
    private let endpoint: ServerEndpoint
    private let configuration: WebSocketClientConfiguration
    private let tls: TLSConfiguration?
    private let maxMessageBytes: Int
    private let inbox = TransportInbox()
    private let outgoing: AsyncStream<String>
    private let writer: AsyncStream<String>.Continuation
    /// Signalled when the connection's task has ended.
    private let finished = DispatchSemaphore(value: 0)
    private let logger: Logger
    private let gate = ReadGate()

    /// A connection to `url` (`ws://` or `wss://`) with subprotocol `meridian.v1`; `headers` are
    /// sent with the upgrade request (e.g. `Authorization: Bearer …`). Nothing happens until
    /// ``connect(timeout:)``. Throws ``ClientError/invalidURL(_:)`` for a URL or TLS settings
    /// it cannot use, and for certificate files it cannot read.
    public convenience init(url: String, tls: ClientTLS = ClientTLS(), headers: [String: String] = [:],
                            maxMessageBytes: Int = 64 << 20, logger: Logger = Logger(label: "meridian.client.transport")) throws(ClientError) {
        let endpoint = try ServerEndpoint(url: url)
        var fields = HTTPFields()
        for (name, value) in headers {
            guard let field = HTTPField.Name(name) else { throw ClientError.invalidURL("\(name) is not a header name") }
            fields[field] = value
        }
        self.init(endpoint: endpoint, tls: try Self.prepare(tls, for: endpoint), headers: fields,
                  maxMessageBytes: maxMessageBytes, logger: logger)
    }

    /// A connection with TLS already read by ``prepare(_:for:)``.
    init(endpoint: ServerEndpoint, tls: PreparedTLS?, headers: HTTPFields, maxMessageBytes: Int = 64 << 20,
         logger: Logger = Logger(label: "meridian.client.transport")) {
        self.endpoint = endpoint
        var fields = headers
        fields[.secWebSocketProtocol] = "meridian.v1"
        configuration = WebSocketClientConfiguration(
            maxFrameSize: maxMessageBytes, additionalHeaders: fields, closeTimeout: .seconds(5), sniHostname: tls?.serverName)
        self.tls = tls?.configuration
        self.maxMessageBytes = maxMessageBytes
        self.logger = logger
        (outgoing, writer) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// NIOSSL's configuration for `tls` (the roots to trust, the client certificate), its files
    /// read once; nil for `ws://`.
    struct PreparedTLS: Sendable {
        var configuration: TLSConfiguration
        var serverName: String?
    }

    static func prepare(_ tls: ClientTLS, for endpoint: ServerEndpoint) throws(ClientError) -> PreparedTLS? {
        try tls.check(for: endpoint)
        guard endpoint.secure else { return nil }
        var configuration = TLSConfiguration.makeClientConfiguration()
        do {
            if let ca = tls.caFile { configuration.trustRoots = .certificates(try NIOSSLCertificate.fromPEMFile(ca)) }
            if let certificate = tls.certificateFile, let key = tls.privateKeyFile {
                configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(certificate).map { .certificate($0) }
                configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: key, format: .pem))
            }
        } catch {
            let files = [tls.caFile, tls.certificateFile, tls.privateKeyFile].compactMap { $0 }.joined(separator: ", ")
            throw ClientError.invalidURL("cannot read the TLS files (\(files)): \(error)")
        }
        return PreparedTLS(configuration: configuration, serverName: tls.serverName)
    }

    /// Starts the connection and blocks until the upgrade succeeds; throws
    /// ``ClientError/connectionFailed(_:)`` when it fails and ``ClientError/timeout(_:)`` after
    /// `timeout`. Call it once.
    public func connect(timeout: Duration) throws {
        guard inbox.beginConnecting() else { throw ClientError.connectionFailed("connect was called twice") }
        let deadline = Date(timeIntervalSinceNow: Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        Task(executorPreference: TransportExecutor.shared) { [self] in
            await run()
            finished.signal()
        }
        switch inbox.waitUntilOpen(deadline: deadline) {
        case .success: return
        case .failure(let error): throw error
        case nil:
            inbox.abandon(.timeout("connect"))
            writer.finish()
            throw ClientError.timeout("connect to \(endpoint.url)")
        }
    }

    /// Queues `text` as one text message, written after every message queued before it.
    public func send(_ text: String) { writer.yield(text) }

    /// Blocks until the next message, throwing ``ClientError/timeout(_:)`` after `timeout`; `.closed`
    /// once the connection is over and every message was taken.
    public func receive(timeout: Duration) throws -> TransportMessage {
        let deadline = Date(timeIntervalSinceNow: Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18)
        guard let message = inbox.next(deadline: deadline) else { throw ClientError.timeout("receive") }
        return message
    }

    /// Stops taking messages from the socket, so the server's sends back up (a slow consumer).
    /// Takes hold after the message the transport is waiting for, if it is waiting: until then
    /// it still answers the server's pings.
    public func pauseReading() { gate.pause() }

    /// Takes messages again after ``pauseReading()``.
    public func resumeReading() { gate.resume() }

    /// Sends a close frame after what was queued, and returns once an open connection is over
    /// (at most the close timeout later). Idempotent.
    public func close() {
        let wasOpen = inbox.wasOpened
        inbox.abandon(.closed)
        gate.resume()
        writer.finish()
        // A connection that never opened is dropped by its task when the upgrade ends, if ever.
        guard wasOpen else { return }
        if finished.wait(timeout: .now() + 6) == .success { finished.signal() }
    }

    /// The connection's whole life: upgrade, then writes (in order) beside reads, until either side closes.
    private func run() async {
        let (inbox, outgoing, maxBytes, gate) = (self.inbox, self.outgoing, self.maxMessageBytes, self.gate)
        do {
            let close = try await WebSocketClient.connect(
                url: endpoint.url, configuration: configuration, tlsConfiguration: tls, eventLoopGroup: Self.eventLoopGroup, logger: logger
            ) { inbound, outbound, _ in
                guard inbox.opened() else { return }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        for await text in outgoing { try await outbound.write(.text(text)) }
                        if !Task.isCancelled { try await outbound.close(.normalClosure, reason: nil) }
                    }
                    for try await message in inbound.messages(maxSize: maxBytes) {
                        if case .text(let text) = message { inbox.deliver(text) }
                        await gate.pass()
                    }
                    group.cancelAll()
                }
            }
            inbox.ended(code: close.map { UInt16(webSocketErrorCode: $0.closeCode) }, reason: "the server refused the upgrade")
        } catch {
            inbox.ended(code: nil, reason: "\(endpoint.url): \(error)")
        }
    }

    #if canImport(Network)
    private static var eventLoopGroup: any EventLoopGroup { NIOTSEventLoopGroup.singleton }
    #else
    private static var eventLoopGroup: any EventLoopGroup { MultiThreadedEventLoopGroup.singleton }
    #endif
}

/// Runs the transports' tasks on threads of their own, so a caller blocked in `receive` on a
/// cooperative thread cannot starve the task that would wake it.
final class TransportExecutor: TaskExecutor {
    static let shared = TransportExecutor()
    private let queue = DispatchQueue(label: "meridian.client.transport", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}

/// Holds the reading side while paused.
final class ReadGate: Sendable {
    private let state = Locked<(paused: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))

    func pause() { state.withLock { $0.paused = true } }

    func resume() {
        let waiter = state.withLock { state in
            state.paused = false
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Returns at once unless paused; then when resumed.
    func pass() async {
        guard state.withLock({ $0.paused }) else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let wait = state.withLock { state in
                guard state.paused else { return false }
                state.waiter = continuation
                return true
            }
            if !wait { continuation.resume() }
        }
    }
}
