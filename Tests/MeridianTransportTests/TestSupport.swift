import Foundation
import MeridianTransport
import MeridianTesting
import MeridianTransportCore
#if canImport(Glibc)
import Glibc
#endif

/// Echoes every message back to its sender and records opens and closes.
final class EchoHandler: TransportHandler, @unchecked Sendable {
    struct Close: Equatable {
        var connection: ConnectionID
        var code: UInt16?
        var reason: String
    }

    private let condition = NSCondition()
    private var _opened: [ConnectionID] = []
    private var _closed: [Close] = []
    private var _handshakes: [ConnectionID: Handshake] = [:]
    // `echo`, `verdict` and `onTick` are read on the service thread: set them before the server
    // starts, or on the service thread (`server.execute { handler.onTick = … }`).
    var echo = true
    /// Decides upgrades, on the service thread; nil accepts all (the protocol's default).
    var verdict: ((Handshake) -> HandshakeVerdict)?
    /// Runs on every tick, on the service thread.
    var onTick: ((ServerLoop) -> Void)?

    var opened: [ConnectionID] { condition.withLock { _opened } }
    var closed: [Close] { condition.withLock { _closed } }
    var handshakes: [ConnectionID: Handshake] { condition.withLock { _handshakes } }

    func transport(_ server: ServerLoop, shouldAccept handshake: Handshake) -> HandshakeVerdict {
        verdict?(handshake) ?? .accept
    }

    func transport(_ server: ServerLoop, didOpen connection: ConnectionID, handshake: Handshake) {
        condition.withLock {
            _opened.append(connection)
            _handshakes[connection] = handshake
            condition.broadcast()
        }
    }

    func transport(_ server: ServerLoop, didReceive message: UnsafeRawBufferPointer, from connection: ConnectionID) {
        if echo { server.send(OutboundFrame(text: Array(message)), to: connection) }
    }

    func transport(_ server: ServerLoop, didClose connection: ConnectionID, code: UInt16?, reason: String) {
        condition.withLock {
            _closed.append(Close(connection: connection, code: code, reason: reason))
            condition.broadcast()
        }
    }

    func transportTick(_ server: ServerLoop) { onTick?(server) }

    func transport(_ server: ServerLoop, handle request: HTTPRequest) -> HTTPResponse? {
        if request.path == "/echo" {
            return HTTPResponse(status: 200, contentType: "text/plain", body: Array("\(request.method) ".utf8) + request.body)
        }
        guard request.path == "/hello" else { return nil }
        return .json(200, #"{"hello":"\#(request.query)"}"#)
    }

    /// Waits (on a condition variable) until `predicate` holds for the recorded state.
    func wait(timeout: TimeInterval = 5, until predicate: (_ opened: [ConnectionID], _ closed: [Close]) -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !predicate(_opened, _closed) {
            if !condition.wait(until: deadline) { return predicate(_opened, _closed) }
        }
        return true
    }
}

/// Starts a server on an ephemeral port.
func startServer(
    handler: EchoHandler = EchoHandler(), _ configure: (inout TransportConfiguration) -> Void = { _ in }
) throws -> (server: WebSocketServer, handler: EchoHandler, port: Int) {
    var configuration = TransportConfiguration()
    configuration.port = 0
    configure(&configuration)
    let server = WebSocketServer(configuration: configuration, handler: handler)
    let port = try server.start()
    return (server, handler, port)
}

/// Runs `body` on the server's service thread and waits for its result.
func onServiceThread<T: Sendable>(_ server: WebSocketServer, _ body: @escaping @Sendable (ServerLoop) -> T) -> T {
    let box = ResultBox<T>()
    server.execute { loop in box.set(body(loop)) }
    return box.get()
}

final class ResultBox<T: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var value: T?

    func set(_ newValue: T) {
        condition.withLock {
            value = newValue
            condition.broadcast()
        }
    }

    /// The value, or nil if none was set within `timeout` seconds.
    func get(timeout: TimeInterval) -> T? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        return condition.withLock {
            while value == nil {
                if !condition.wait(until: deadline) { break }
            }
            return value
        }
    }

    func get() -> T {
        condition.withLock {
            while value == nil { condition.wait() }
            return value!
        }
    }
}

/// One HTTP/1.1 GET on a fresh connection; returns the status code and body.
func httpGet(port: Int, path: String) throws -> (status: Int, body: String) {
    try HTTPConnection(port: port).get(path)
}

/// Sends a WebSocket upgrade request on a fresh connection and returns the answer's status
/// and body (101 and "" when accepted).
func upgradeAnswer(port: Int, path: String = "/", subprotocol: String = "meridian.v1", headers: String = "") throws -> (status: Int, body: String) {
    try HTTPConnection(port: port).get(path, headers: "Upgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
        + "Sec-WebSocket-Protocol: \(subprotocol)\r\n" + headers)
}
