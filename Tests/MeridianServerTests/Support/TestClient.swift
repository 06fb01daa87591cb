import MeridianClientTransport
import MeridianCore
import MeridianProtocol
import MeridianTransportCore
import Testing

/// A protocol-level test client over a real WebSocket connection.
final class TestClient {
    let socket: WebSocketClient
    private var nextRef = 1
    /// Messages read while waiting for an answer, not yet consumed.
    private(set) var pending: [JSONValue] = []
    var welcome: JSONValue = .null

    init(port: Int, path: String = "/", headers: [String: String] = [:]) throws {
        socket = WebSocketClient(port: port, path: path, headers: headers)
        try socket.connect()
    }

    deinit { socket.close() }

    var participant: String { welcome["participant"]?.string ?? "" }

    func send(_ message: JSONValue) {
        socket.send(String(decoding: message.encoded, as: UTF8.self))
    }

    func sendText(_ text: String) { socket.send(text) }

    /// The next message, in arrival order.
    func next(timeout: Duration = .seconds(5)) throws -> JSONValue {
        try next(by: .now + timeout)
    }

    /// The next message, if one comes by `deadline` (the loops below wait for one message among
    /// many with one deadline for all: a stream of other messages does not keep them waiting).
    private func next(by deadline: ContinuousClock.Instant) throws -> JSONValue {
        if !pending.isEmpty { return pending.removeFirst() }
        let left = deadline - .now
        guard left > .zero else { throw TransportError.timeout }
        switch try socket.receive(timeout: left) {
        case .text(let text):
            return try #require(JSONValue.parse(Array(text.utf8)), "server sent invalid JSON: \(text)")
        case .closed(let code, let reason):
            return .object(["type": .string("$closed"), "code": code.map { .number(Double($0)) } ?? .null, "reason": .string(reason)])
        }
    }

    /// The next message of `type`, skipping and returning the others in order.
    func next(_ type: String, timeout: Duration = .seconds(5)) throws -> (message: JSONValue, skipped: [JSONValue]) {
        var skipped: [JSONValue] = []
        let deadline = ContinuousClock.now + timeout
        while true {
            let m = try next(by: deadline)
            if m["type"]?.string == type { return (m, skipped) }
            if m["type"]?.string == "$closed" { Issue.record("closed while waiting for \(type): \(m)"); return (m, skipped) }
            skipped.append(m)
        }
    }

    /// Sends a request and returns its answer (`ack`, `error` or `welcome`);
    /// events that arrive first are kept for `next()`.
    @discardableResult
    func request(_ type: String, _ fields: [String: JSONValue] = [:]) throws -> JSONValue {
        let ref = nextRef
        nextRef += 1
        var message = fields
        message["type"] = .string(type)
        message["ref"] = .number(Double(ref))
        send(.object(message))
        var others: [JSONValue] = []
        defer { pending.insert(contentsOf: others, at: 0) }
        let deadline = ContinuousClock.now + .seconds(5)
        while true {
            let m = try next(by: deadline)
            if m["ref"]?.number == Double(ref) { return m }
            if m["type"]?.string == "$closed" { return m }
            others.append(m)
        }
    }

    func join(_ session: String, name: String, role: String, extra: [String: JSONValue] = [:]) throws {
        var fields = extra
        fields["session"] = .string(session)
        fields["name"] = .string(name)
        fields["role"] = .string(role)
        welcome = try request("join", fields)
        #expect(welcome["type"]?.string == "welcome", "join refused: \(welcome)")
    }

    /// Drains messages until one satisfies `match`, for at most `timeout` in all.
    func waitFor(timeout: Duration = .seconds(5), _ match: (JSONValue) -> Bool) throws -> JSONValue {
        let deadline = ContinuousClock.now + timeout
        while true {
            let m = try next(by: deadline)
            if match(m) { return m }
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
