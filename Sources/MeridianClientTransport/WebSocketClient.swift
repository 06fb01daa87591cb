import Dispatch
import MeridianTransportCore

/// A small blocking WebSocket client on libwebsockets, with its own context and service thread.
/// Used by tests and as the base of a client library. All public methods are thread-safe.
/// Call ``close(code:reason:)`` when done: until then the service thread keeps running.
///
/// The connection itself (a ``ClientConnection``) lives on the service thread only; this
/// object holds settings, the ``ServiceThread`` that reaches the connection, and the
/// ``ClientMailbox`` through which the connection hands its messages back.
public final class WebSocketClient: Sendable {
    /// What ``receive(timeout:)`` returns.
    public enum Message: Sendable, Equatable {
        /// One whole text message.
        case text(String)
        /// The connection is closed: the code and reason of the server's close frame (nil if none).
        case closed(code: UInt16?, reason: String)
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
        /// PEM files of a client certificate and its key, for servers that ask for one.
        public var certificateFilePath: String?
        public var privateKeyFilePath: String?

        public init(caFilePath: String? = nil, allowSelfSigned: Bool = false, serverName: String? = nil,
                    skipHostnameCheck: Bool = false, certificateFilePath: String? = nil, privateKeyFilePath: String? = nil) {
            self.caFilePath = caFilePath
            self.allowSelfSigned = allowSelfSigned
            self.serverName = serverName
            self.skipHostnameCheck = skipHostnameCheck
            self.certificateFilePath = certificateFilePath
            self.privateKeyFilePath = privateKeyFilePath
        }
    }

    let settings: ClientConnection.Settings
    let serviceThread = ServiceThread<ClientConnection>(name: "meridian-ws-client")
    let mailbox = ClientMailbox()

    /// Describes the connection; nothing happens until ``connect(timeout:)``.
    /// A nil `subprotocol` sends no Sec-WebSocket-Protocol header; a non-nil `tls` connects
    /// with wss://. `headers` are extra request headers by name (e.g. Authorization, Origin;
    /// no Origin is sent otherwise).
    public init(host: String = "127.0.0.1", port: Int, path: String = "/", subprotocol: String? = "meridian.v1",
                tls: TLS? = nil, headers: [String: String] = [:]) {
        settings = ClientConnection.Settings(
            host: host, port: port, path: path, subprotocol: subprotocol, tls: tls, headers: headers)
    }

    /// Connects on a new service thread. Throws if the connection or handshake fails, is
    /// refused, or does not complete within `timeout`.
    public func connect(timeout: Duration = .seconds(5)) throws {
        let deadline = DispatchTime.now() + timeout.timeInterval
        guard mailbox.beginConnecting() else { throw TransportError.alreadyStarted }
        let (settings, mailbox, thread) = (self.settings, self.mailbox, self.serviceThread)
        do {
            try serviceThread.start { () throws(TransportError) in
                try ClientConnection.open(settings, mailbox: mailbox, thread: thread)
            }
        } catch {
            throw mailbox.failIfConnecting(error)
        }
        switch mailbox.waitUntilOpenOrFailed(deadline: deadline) {
        case .open:
            return
        case .failed(let error):
            serviceThread.stop()
            throw error
        case .idle, .connecting:
            // Gives up: drops the connection, and reports the timeout rather than how it ended.
            serviceThread.stop()
            mailbox.fail(.timeout)
            throw TransportError.timeout
        }
    }

    /// Queues a text message; it is written from the client's WRITEABLE, in parts if large.
    public func send(_ text: String) {
        let bytes = Array(text.utf8)
        serviceThread.execute { $0.send(bytes) }
    }

    /// Blocks until a message arrives or `timeout` passes. After the connection closed (and
    /// every earlier message was returned) returns `.closed`. Throws ``TransportError/timeout``.
    public func receive(timeout: Duration = .seconds(5)) throws -> Message {
        try mailbox.receive(deadline: DispatchTime.now() + timeout.timeInterval)
    }

    /// Stops reading from the socket (the server's sends back up), for slow-consumer tests.
    public func pauseReading() { serviceThread.execute { $0.pauseReading() } }

    /// Resumes reading after ``pauseReading()``.
    public func resumeReading() { serviceThread.execute { $0.resumeReading() } }

    /// Sends a close frame and returns once the connection is closed and the thread has ended.
    /// Idempotent.
    public func close(code: UInt16 = 1000, reason: String = "") {
        guard mailbox.isConnectingOrOpen else { return }
        serviceThread.stop { $0.close(code: code, reason: reason) }
    }
}
