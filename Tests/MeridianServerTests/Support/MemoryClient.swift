import MeridianCore
import MeridianTransport
import Testing

/// A protocol-level client of a ``MemoryServer``, with the API of ``TestClient``. Reading never
/// waits for time to pass: it settles the hubs, and when nothing is left to read it throws.
/// A connection the hub closed reads as one `$closed` message (with its code and reason) after
/// the messages that came before the close.
final class MemoryClient {
    private let server: MemoryServer
    let id: ConnectionID
    private var nextRef = 1
    /// Messages read while waiting for an answer, not yet consumed.
    private(set) var pending: [JSONValue] = []
    /// Messages received after the last answer, not yet read.
    private var unread: [JSONValue] = []
    private var closeRead = false
    var welcome: JSONValue = .null

    init(server: MemoryServer, id: ConnectionID) {
        self.server = server
        self.id = id
    }

    var participant: String { welcome["participant"]?.string ?? "" }

    func send(_ message: JSONValue) { server.memory.receive(message.encoded, from: id) }

    func sendText(_ text: String) { server.memory.receive(Array(text.utf8), from: id) }

    /// The client closes its connection.
    func disconnect() { server.disconnect(id) }

    /// Settles the hubs and takes what came for this client.
    private func receive() {
        server.settle()
        unread += server.memory.drain(id)
    }

    /// Every message not read yet, in arrival order, the hubs settled first; none is read.
    func peek() -> [JSONValue] {
        receive()
        return pending + unread
    }

    /// The next message, in arrival order; throws if none is left once the hubs settled.
    func next() throws -> JSONValue {
        if !pending.isEmpty { return pending.removeFirst() }
        if unread.isEmpty { receive() }
        if !unread.isEmpty { return unread.removeFirst() }
        if let close = server.memory.closing(of: id), !closeRead {
            closeRead = true
            return .object(["type": .string("$closed"), "code": .number(Double(close.code)), "reason": .string(close.reason)])
        }
        throw MemoryClientError.nothingToRead
    }

    /// The next message of `type`, skipping and returning the others in order.
    func next(_ type: String) throws -> (message: JSONValue, skipped: [JSONValue]) {
        var skipped: [JSONValue] = []
        while true {
            let m = try next()
            if m["type"]?.string == type { return (m, skipped) }
            if m["type"]?.string == "$closed" { Issue.record("closed while waiting for \(type): \(m)"); return (m, skipped) }
            skipped.append(m)
        }
    }

    /// Sends a request and returns its answer (`ack`, `error` or `welcome`), or `$closed` if the
    /// hub closed the connection first; the messages that came before it are kept for `next()`.
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
        while true {
            let m = try next()
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

    /// Reads messages until one satisfies `match`.
    func waitFor(_ match: (JSONValue) -> Bool) throws -> JSONValue {
        while true {
            let m = try next()
            if match(m) { return m }
        }
    }
}

enum MemoryClientError: Error {
    /// The hubs settled and nothing was left for the client to read.
    case nothingToRead
}
