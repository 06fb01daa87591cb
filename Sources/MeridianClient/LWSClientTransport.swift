#if canImport(MeridianClientTransport)
import MeridianClientTransport

/// The Linux transport: a libwebsockets client with its own service thread.
public final class LWSClientTransport: ClientTransport {
    private let socket: WebSocketClient

    /// A plain `ws://` connection to `host`:`port` at `path`, with subprotocol `meridian.v1`,
    /// opened by ``connect(timeout:)``.
    public init(host: String, port: Int, path: String = "/") {
        socket = WebSocketClient(host: host, port: port, path: path, subprotocol: "meridian.v1")
    }

    /// A connection to `endpoint`, over TLS for `wss://`; `headers` go with the upgrade request.
    public init(endpoint: ServerEndpoint, tls: ClientTLS = ClientTLS(), headers: [String: String] = [:]) {
        let settings = endpoint.secure
            ? WebSocketClient.TLS(caFilePath: tls.caFile, serverName: tls.serverName,
                                  certificateFilePath: tls.certificateFile, privateKeyFilePath: tls.privateKeyFile)
            : nil
        socket = WebSocketClient(host: endpoint.host, port: endpoint.port, path: endpoint.path, subprotocol: "meridian.v1",
                                 tls: settings, headers: headers)
    }

    /// Connects on its own service thread; throws when the connection or the upgrade fails, is
    /// refused, or takes longer than `timeout`.
    public func connect(timeout: Duration) throws { try socket.connect(timeout: timeout) }

    /// Queues `text` as one text message.
    public func send(_ text: String) { socket.send(text) }

    /// Blocks until the next message, throwing after `timeout`; once the connection is over and
    /// every earlier message was returned, `.closed` with the server's close code, if it sent one.
    public func receive(timeout: Duration) throws -> TransportMessage {
        switch try socket.receive(timeout: timeout) {
        case .text(let text): return .text(text)
        case .closed(let code, _): return .closed(code: code)
        }
    }

    /// Stops reading from the socket, so the server's sends back up (a slow consumer).
    public func pauseReading() { socket.pauseReading() }

    /// Reads again after ``pauseReading()``.
    public func resumeReading() { socket.resumeReading() }

    /// Sends a close frame and returns once the connection is closed and its thread has ended.
    /// Idempotent.
    public func close() { socket.close() }
}
#endif
