import MeridianCore
import Testing

/// What ``TestClient`` (a real socket) and ``MemoryClient`` (a hub in memory) share: requests
/// numbered by ref and matched with their answers, messages read while waiting for one kept for
/// later, and reads that wait for one message among many with one deadline for all.
protocol ScriptedClient: AnyObject {
    var nextRef: Int { get set }
    /// Messages read while waiting for an answer, not yet consumed.
    var pending: [JSONValue] { get set }
    var welcome: JSONValue { get set }
    func send(_ message: JSONValue)
    /// The next message from the connection, if one comes by `deadline`.
    func read(by deadline: ContinuousClock.Instant) throws -> JSONValue
}

extension ScriptedClient {
    var participant: String { welcome["participant"]?.string ?? "" }

    /// The next message, in arrival order.
    func next(timeout: Duration = .seconds(5)) throws -> JSONValue {
        try next(by: .now + timeout)
    }

    func next(by deadline: ContinuousClock.Instant) throws -> JSONValue {
        if !pending.isEmpty { return pending.removeFirst() }
        return try read(by: deadline)
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

    /// Sends a request and returns its answer (`ack`, `error` or `welcome`), or `$closed` if the
    /// connection closed first; the messages that came before it are kept for `next()`.
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

    /// Reads messages until one satisfies `match`, for at most `timeout` in all.
    func waitFor(timeout: Duration = .seconds(5), _ match: (JSONValue) -> Bool) throws -> JSONValue {
        let deadline = ContinuousClock.now + timeout
        while true {
            let m = try next(by: deadline)
            if match(m) { return m }
        }
    }
}
