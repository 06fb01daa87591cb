import MeridianSync
import Foundation
import MeridianCore
import HTTPTypes

/// A Protocol v1 client: joins one session, mirrors its state (``state``), reports updates
/// (``updates`` and ``delegate``), correlates requests with their answers by `ref`, and
/// reconnects with backoff and resume when the connection drops.
///
/// `connect()` blocks until joined; a reader thread then applies events in `seq` order.
/// Updates are delivered on that thread, after the mirror has applied them. Every method may
/// be called from any thread: what the reader and the callers share is under one mutex.
public final class MeridianClient: Sendable {
    /// The answer to an accepted request.
    public struct Ack: Hashable, Sendable {
        /// The session seq after the request (§2).
        public var seq: UInt64
        /// The applied camera when it differs from the one sent.
        public var camera: Camera?
    }

    /// What the client joins with (session, name, role, token) and its timeouts, reconnect and
    /// offline-queue policies, as given at creation.
    public let configuration: ClientConfiguration
    /// A new connection, given the token joins carry at that moment (for an `Authorization` header).
    let makeTransport: @Sendable (_ token: String?) -> any ClientTransport

    /// What the reader thread shares with the client's callers.
    struct Shared {
        var transport: (any ClientTransport)?
        var mirror: SessionState?
        var lastWelcome: Welcome?
        /// A `moved` came: the next welcome (or error) answers the join the server made for it.
        var awaitingHandover = false
        var nextRef = 1
        var pending: [Int: (type: String, complete: @Sendable (Result<Ack, any Error>) -> Void)] = [:]
        var isClosed = false
        /// The token joins carry: the configured one until ``refreshToken(_:)``.
        var currentToken: String?
        /// Edits submitted and not settled yet, oldest first (``submit(_:)``).
        var edits: [OfflineEdit] = []
        var nextEditID = 1
        /// Whether edits are being sent.
        var flushing = false
        /// Called with every update besides the delegate (``observe(_:)``).
        var observers: [@Sendable (ClientUpdate) -> Void] = []
        weak var delegate: (any MeridianClientDelegate)?

        /// Installs a welcome: a fresh snapshot replaces the mirror; a resume keeps it.
        mutating func adopt(_ welcome: Welcome) {
            lastWelcome = welcome
            if !welcome.resumed || mirror == nil {
                mirror = SessionState(snapshot: welcome.snapshot ?? .object(["seq": .number(Double(welcome.seq))]))
            }
            if welcome.interest != nil { mirror?.isFiltered = true }
        }
    }

    let shared: Locked<Shared>
    /// Signalled by ``close()``, and passed on by whoever it wakes: ends a reconnect's backoff.
    let closing = DispatchSemaphore(value: 0)

    /// Every update in order; finishes when the client is closed or gives up reconnecting.
    public let updates: AsyncStream<ClientUpdate>
    let updatesContinuation: AsyncStream<ClientUpdate>.Continuation

    /// A client whose connections come from `transport` (called again for each reconnect).
    public convenience init(configuration: ClientConfiguration, transport: @escaping @Sendable () -> any ClientTransport) {
        self.init(configuration: configuration, authorizedTransport: { _ in transport() })
    }

    /// A client whose connections come from `transport`, called for each connect and reconnect
    /// with the bearer token the join will carry.
    public init(configuration: ClientConfiguration, authorizedTransport transport: @escaping @Sendable (_ token: String?) -> any ClientTransport) {
        self.configuration = configuration
        self.makeTransport = transport
        let (edits, next) = Self.loadEdits(from: configuration.offline.file)
        self.shared = Locked(Shared(currentToken: configuration.token, edits: edits, nextEditID: next))
        (updates, updatesContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// A client of the server at `ws://host:port/` over the platform's default transport.
    public convenience init(host: String = "127.0.0.1", port: Int, configuration: ClientConfiguration) {
        #if canImport(MeridianClientTransport)
        self.init(configuration: configuration) { LWSClientTransport(host: host, port: port) }
        #else
        // A host and port always make a valid URL.
        try! self.init(url: "ws://\(host.contains(":") ? "[\(host)]" : host):\(port)/", configuration: configuration)
        #endif
    }

    /// A client of the server at `url` (`ws://` or `wss://`, with `tls` for the latter), over
    /// `transport`: by default libwebsockets for `ws://` on Linux, the portable transport for
    /// `wss://` and everywhere else.
    /// Each connection sends the token as `Authorization: Bearer` too. Throws
    /// ``ClientError/invalidURL(_:)`` when the URL or the TLS settings cannot be used.
    public convenience init(url: String, configuration: ClientConfiguration, tls: ClientTLS = ClientTLS(),
                            transport: TransportChoice = .automatic) throws(ClientError) {
        let endpoint = try ServerEndpoint(url: url)
        let prepared = try NIOClientTransport.prepare(tls, for: endpoint)
        #if canImport(MeridianClientTransport)
        if transport == .libwebsockets || transport == .automatic && !endpoint.secure {
            self.init(configuration: configuration, authorizedTransport: { token in
                LWSClientTransport(endpoint: endpoint, tls: tls, headers: token.map { ["Authorization": "Bearer \($0)"] } ?? [:])
            })
            return
        }
        #endif
        self.init(configuration: configuration, authorizedTransport: { token in
            var headers = HTTPFields()
            if let token { headers[.authorization] = "Bearer \(token)" }
            return NIOClientTransport(endpoint: endpoint, tls: prepared, headers: headers)
        })
    }

    /// Receives every update and every applied event, on the reader thread; held weakly.
    public var delegate: (any MeridianClientDelegate)? {
        get { shared.withLock { $0.delegate } }
        set { shared.withLock { $0.delegate = newValue } }
    }

    /// The mirror of the session (nil before the first join).
    public var state: SessionState? { shared.withLock { $0.mirror } }

    /// This connection's participant id and the session epoch, from the latest welcome.
    public var welcome: Welcome? { shared.withLock { $0.lastWelcome } }

    /// Connects and joins; returns the welcome. Then keeps the session mirrored until ``close()``.
    @discardableResult
    public func connect() throws -> Welcome {
        let (t, welcome) = try handshake(resume: nil)
        let closed = shared.withLock { shared in
            guard !shared.isClosed else { return true }
            shared.transport = t
            shared.adopt(welcome)
            return false
        }
        if closed { t.close(); throw ClientError.closed }
        emit(.didConnect(welcome))
        let reader = Thread { [self] in readLoop(t) }
        reader.name = "meridian-client"
        reader.start()
        return welcome
    }

    /// Sends a request and waits for its `ack`; throws ``ClientError`` when it is refused,
    /// times out, or the connection drops first.
    @discardableResult
    public func send(_ request: SessionRequest) async throws -> Ack {
        try await withCheckedThrowingContinuation { continuation in
            post(request) { continuation.resume(with: $0) }
        }
    }

    /// Sends a request now, from the caller's thread (requests posted one after another go out
    /// in that order), and calls `completion` with its answer: the `ack`, or a ``ClientError``
    /// when it is refused, times out, or the connection drops first.
    public func post(_ request: SessionRequest, completion: @escaping @Sendable (Result<Ack, any Error>) -> Void) {
        let registered = shared.withLock { shared -> Result<(ref: Int, transport: any ClientTransport), ClientError> in
            guard !shared.isClosed, let t = shared.transport else {
                return .failure(shared.isClosed ? .closed : .disconnected)
            }
            let ref = shared.nextRef
            shared.nextRef += 1
            shared.pending[ref] = (request.type, completion)
            // Written under the lock: posts from several threads keep their refs' order on the wire.
            t.send(request.encoded(ref: ref))
            return .success((ref, t))
        }
        switch registered {
        case .failure(let error):
            completion(.failure(error))
        case .success(let sent):
            let timeout = configuration.requestTimeout
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout.timeInterval) { [weak self] in
                self?.finish(ref: sent.ref) { .failure(ClientError.timeout($0)) }
            }
        }
    }

    /// Hands the server a fresh token before the current one expires (`token.refresh`);
    /// later reconnects join with it.
    @discardableResult
    public func refreshToken(_ token: String) async throws -> Ack {
        let ack = try await send(.refreshToken(token))
        shared.withLock { $0.currentToken = token }
        return ack
    }

    /// Closes the connection and stops reconnecting. Idempotent.
    public func close() {
        let (wasOpen, t) = shared.withLock { shared -> (Bool, (any ClientTransport)?) in
            guard !shared.isClosed else { return (false, nil) }
            shared.isClosed = true
            defer { shared.transport = nil }
            return (true, shared.transport)
        }
        guard wasOpen else { return }
        closing.signal()
        t?.close()
        failPending(.closed)
    }

    deinit { updatesContinuation.finish() }

    // MARK: Internals shared with the reader.

    /// Calls `handler` with every update from now on, on the thread that made it (besides the
    /// delegate and ``updates``), for companions such as a map binding.
    public func observe(_ handler: @escaping @Sendable (ClientUpdate) -> Void) {
        shared.withLock { $0.observers.append(handler) }
    }

    func emit(_ update: ClientUpdate) {
        updatesContinuation.yield(update)
        if let d = delegate { d.client(self, didReceive: update) }
        for observer in shared.withLock({ $0.observers }) { observer(update) }
        // Connected again: the edits that waited go out.
        if case .didConnect = update { flushEdits() }
    }

    func finish(ref: Int, _ result: (String) -> Result<Ack, any Error>) {
        let entry = shared.withLock { $0.pending.removeValue(forKey: ref) }
        if let entry { entry.complete(result(entry.type)) }
    }

    func failPending(_ error: ClientError) {
        let all = shared.withLock { shared in
            defer { shared.pending.removeAll() }
            return shared.pending
        }
        for entry in all.values { entry.complete(.failure(error)) }
    }
}

extension Duration {
    var timeInterval: TimeInterval {
        let c = components
        return TimeInterval(c.seconds) + TimeInterval(c.attoseconds) / 1e18
    }
}
