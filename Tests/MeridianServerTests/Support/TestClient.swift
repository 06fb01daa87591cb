import MeridianClientTransport
import MeridianCore
import MeridianProtocol
import MeridianTransportCore
import Testing

/// A protocol-level test client over a real WebSocket connection.
final class TestClient: ScriptedClient {
    let socket: WebSocketClient
    var nextRef = 1
    var pending: [JSONValue] = []
    var welcome: JSONValue = .null

    init(port: Int, path: String = "/", headers: [String: String] = [:]) throws {
        socket = WebSocketClient(port: port, path: path, headers: headers)
        try socket.connect()
    }

    deinit { socket.close() }

    func send(_ message: JSONValue) {
        socket.send(String(decoding: message.encoded, as: UTF8.self))
    }

    func sendText(_ text: String) { socket.send(text) }

    /// The next message, if one comes by `deadline` (the loops below wait for one message among
    /// many with one deadline for all: a stream of other messages does not keep them waiting).
    func read(by deadline: ContinuousClock.Instant) throws -> JSONValue {
        let left = deadline - .now
        guard left > .zero else { throw TransportError.timeout }
        switch try socket.receive(timeout: left) {
        case .text(let text):
            return try #require(JSONValue.parse(Array(text.utf8)), "server sent invalid JSON: \(text)")
        case .closed(let code, let reason):
            return .object(["type": .string("$closed"), "code": code.map { .number(Double($0)) } ?? .null, "reason": .string(reason)])
        }
    }
}

extension JSONValue {
    subscript(key: String) -> JSONValue? {
        if case .object(let o) = self { return o[key] }
        return nil
    }

    subscript(index: Int) -> JSONValue? {
        if case .array(let a) = self, a.indices.contains(index) { return a[index] }
        return nil
    }

    var string: String? { if case .string(let s) = self { return s }; return nil }
    var number: Double? { if case .number(let n) = self { return n }; return nil }
    var bool: Bool? { if case .bool(let b) = self { return b }; return nil }
    var array: [JSONValue]? { if case .array(let a) = self { return a }; return nil }
    var isNull: Bool { self == .null }

    static func coordinate(_ lat: Double, _ lon: Double) -> JSONValue {
        .object(["latitude": .number(lat), "longitude": .number(lon)])
    }

    static func point(_ id: String, _ lat: Double, _ lon: Double, draggable: Bool = true, title: String? = nil, canShowCallout: Bool = false) -> JSONValue {
        var o: [String: JSONValue] = [
            "id": .string(id), "type": .string("point"), "coordinate": .coordinate(lat, lon),
            "draggable": .bool(draggable), "canShowCallout": .bool(canShowCallout),
        ]
        if let title { o["title"] = .string(title) }
        return .object(o)
    }
}
