import MeridianClientTransport

/// The Linux transport: a libwebsockets client with its own service thread.
public final class LWSClientTransport: ClientTransport {
    private let socket: WebSocketClient

    public init(host: String, port: Int, path: String = "/") {
        socket = WebSocketClient(host: host, port: port, path: path, subprotocol: "meridian.v1")
    }

    public func connect(timeout: Duration) throws { try socket.connect(timeout: timeout) }

    public func send(_ text: String) { socket.send(text) }

    public func receive(timeout: Duration) throws -> TransportMessage {
        switch try socket.receive(timeout: timeout) {
        case .text(let text): return .text(text)
        case .closed(let code, _): return .closed(code: code)
        }
    }

    public func close() { socket.close() }
}
