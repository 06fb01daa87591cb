import DequeModule
import Foundation
import MeridianTransportCore
internal import CLibWebSockets

/// A small blocking WebSocket client on libwebsockets, with its own context and service thread.
/// Used by tests and as the base of a client library. All public methods are thread-safe.
/// Call ``close(code:reason:)`` when done: until then the service thread keeps the client alive.
public final class WebSocketClient: @unchecked Sendable {
    /// What ``receive(timeout:)`` returns.
    public enum Message: Sendable, Equatable {
        /// One whole text message.
        case text(String)
        /// The connection is closed: the code and reason of the server's close frame (nil if none).
        case closed(code: UInt16?, reason: String)
    }

    enum Phase {
        case idle
        case connecting
        case open
        case failed(TransportError)
    }

    enum Command {
        case send([UInt8])
        case pauseReading
        case resumeReading
        case close(code: UInt16, reason: String)
        case abort
    }

    /// TLS for a wss:// connection.
    public struct TLS: Sendable {
        /// PEM file of the certificate authorities to trust; nil uses the system's.
        public var caFilePath: String?
        /// Accept a self-signed server certificate (tests only).
        public var allowSelfSigned: Bool
        /// Name the server certificate must carry (and the SNI sent); nil uses the host.
        public var serverName: String?
        /// Skip the check that the certificate names the server (tests only).
        public var skipHostnameCheck: Bool

        public init(caFilePath: String? = nil, allowSelfSigned: Bool = false, serverName: String? = nil,
                    skipHostnameCheck: Bool = false) {
            self.caFilePath = caFilePath
            self.allowSelfSigned = allowSelfSigned
            self.serverName = serverName
            self.skipHostnameCheck = skipHostnameCheck
        }
    }

    /// Largest part written per WRITEABLE; bigger messages go as continuation frames.
    static let partSize = 64 * 1024

    let host: String
    let port: Int
    let path: String
    let subprotocol: String?
    let tls: TLS?

    // MARK: Shared between threads, guarded by `lock`.
    let lock = NSCondition()
    var phase = Phase.idle
    var inbox = Deque<Message>()
    var closedMessage: Message?
    var commands: [Command] = []
    var wakeableContext: OpaquePointer?
    var threadEnded = false

    // MARK: Service-thread only.
    var wsi: OpaquePointer?
    var retainedSelf: Unmanaged<WebSocketClient>?
    let allocations = CAllocations()
    var outgoing = Deque<[UInt8]>()
    var outgoingOffset = 0
    var partBuffer = WriteBuffer(headroom: Int(mrd_lws_pre()))
    var inbound: [UInt8] = []
    var closeRequest: (code: UInt16, reason: String)?
    var closeFrameSent = false
    var peerClose: (code: UInt16?, reason: String)?
    var exitLoop = false

    /// Describes the connection; nothing happens until ``connect(timeout:)``.
    /// A nil `subprotocol` sends no Sec-WebSocket-Protocol header; a non-nil `tls` connects
    /// with wss://. `headers` are extra request headers by name (e.g. Authorization, Origin;
    /// no Origin is sent otherwise).
    public init(host: String = "127.0.0.1", port: Int, path: String = "/", subprotocol: String? = "meridian.v1",
                tls: TLS? = nil, headers: [String: String] = [:]) {
        self.host = host
        self.port = port
        self.path = path
        self.subprotocol = subprotocol
        self.tls = tls
        self.extraHeaders = headers
    }

    /// Extra handshake headers, written from LWS_CALLBACK_CLIENT_APPEND_HANDSHAKE_HEADER.
    let extraHeaders: [String: String]

    /// Connects on a new service thread. Throws if the connection or handshake fails, is
    /// refused, or does not complete within `timeout`.
    public func connect(timeout: Duration = .seconds(5)) throws {
        lock.lock()
        defer { lock.unlock() }
        guard case .idle = phase else { throw TransportError.alreadyStarted }
        phase = .connecting
        // Balanced by the service thread once its context is destroyed.
        retainedSelf = Unmanaged.passRetained(self)
        let thread = Thread { [self] in runServiceLoop() }
        thread.name = "meridian-ws-client"
        thread.start()
        let deadline = Date(timeIntervalSinceNow: timeout.timeInterval)
        while case .connecting = phase {
            if !lock.wait(until: deadline) { break }
        }
        switch phase {
        case .open:
            return
        case .failed(let error):
            while !threadEnded { lock.wait() }
            throw error
        case .connecting, .idle:
            enqueueLocked(.abort)
            while !threadEnded { lock.wait() }
            phase = .failed(.timeout)
            throw TransportError.timeout
        }
    }

    /// Queues a text message; it is written from the client's WRITEABLE, in parts if large.
    public func send(_ text: String) {
        enqueue(.send(Array(text.utf8)))
    }

    /// Blocks until a message arrives or `timeout` passes. After the connection closed (and
    /// every earlier message was returned) returns `.closed`. Throws ``TransportError/timeout``.
    public func receive(timeout: Duration = .seconds(5)) throws -> Message {
        lock.lock()
        defer { lock.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeout.timeInterval)
        while inbox.isEmpty && closedMessage == nil {
            if case .idle = phase { throw TransportError.notConnected }
            if case .failed = phase { throw TransportError.notConnected }
            if !lock.wait(until: deadline), inbox.isEmpty, closedMessage == nil {
                throw TransportError.timeout
            }
        }
        if let message = inbox.popFirst() { return message }
        return closedMessage!
    }

    /// Stops reading from the socket (the server's sends back up), for slow-consumer tests.
    public func pauseReading() { enqueue(.pauseReading) }

    /// Resumes reading after ``pauseReading()``.
    public func resumeReading() { enqueue(.resumeReading) }

    /// Sends a close frame and returns once the connection is closed and the thread has ended.
    /// Idempotent.
    public func close(code: UInt16 = 1000, reason: String = "") {
        lock.lock()
        defer { lock.unlock() }
        switch phase {
        case .idle, .failed: return
        case .connecting, .open: break
        }
        if !threadEnded { enqueueLocked(.close(code: code, reason: reason)) }
        while !threadEnded { lock.wait() }
    }

    private func enqueue(_ command: Command) {
        lock.lock()
        enqueueLocked(command)
        lock.unlock()
    }

    private func enqueueLocked(_ command: Command) {
        guard !threadEnded else { return }
        commands.append(command)
        // The only lws call made off the service thread; the context is alive while set.
        if let wakeableContext { lws_cancel_service(wakeableContext) }
    }
}
