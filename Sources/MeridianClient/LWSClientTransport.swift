#if canImport(MeridianClientTransport)
import MeridianClientTransport

/// The Linux transport: a libwebsockets client with its own service thread.
public final class LWSClientTransport: ClientTransport {
    private let socket: WebSocketClient

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

    public func connect(timeout: Duration) throws { try socket.connect(timeout: timeout) }

    public func send(_ text: String) { socket.send(text) }

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

    public func close() { socket.close() }
}
#endif
