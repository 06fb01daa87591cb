import MeridianCore
import MeridianTransport
import Testing

/// A protocol-level client of a ``MemoryServer``, with the API of ``TestClient``. Reading never
/// waits for time to pass: it settles the hubs, and when nothing is left to read it throws.
/// A connection the hub closed reads as one `$closed` message (with its code and reason) after
/// the messages that came before the close.
final class MemoryClient: ScriptedClient {
    private let server: MemoryServer
    let id: ConnectionID
    var nextRef = 1
    var pending: [JSONValue] = []
    /// Messages received after the last answer, not yet read.
    private var unread: [JSONValue] = []
    private var closeRead = false
    var welcome: JSONValue = .null

    init(server: MemoryServer, id: ConnectionID) {
        self.server = server
        self.id = id
    }

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

    /// The next message from the hub, in arrival order (no time passes: `deadline` is not
    /// looked at); throws if none is left once the hubs settled.
    func read(by deadline: ContinuousClock.Instant) throws -> JSONValue {
        if unread.isEmpty { receive() }
        if !unread.isEmpty { return unread.removeFirst() }
        if let close = server.memory.closing(of: id), !closeRead {
            closeRead = true
            return .object(["type": .string("$closed"), "code": .number(Double(close.code)), "reason": .string(close.reason)])
        }
        throw MemoryClientError.nothingToRead
    }
}

enum MemoryClientError: Error {
    /// The hubs settled and nothing was left for the client to read.
    case nothingToRead
}
