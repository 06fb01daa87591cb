import Foundation
import MeridianCore

/// A Protocol v1 client: joins one session, mirrors its state (``state``), reports updates
/// (``updates`` and ``delegate``), correlates requests with their answers by `ref`, and
/// reconnects with backoff and resume when the connection drops.
///
/// `connect()` blocks until joined; a reader thread then applies events in `seq` order.
/// Updates are delivered on that thread, after the mirror has applied them.
public final class MeridianClient: @unchecked Sendable {
    /// The answer to an accepted request.
    public struct Ack: Hashable, Sendable {
        /// The session seq after the request (§2).
        public var seq: UInt64
        /// The applied camera when it differs from the one sent.
        public var camera: Camera?
    }

    public let configuration: ClientConfiguration
    let makeTransport: @Sendable () -> any ClientTransport

    // MARK: Guarded by `lock`.
    let lock = NSCondition()
    var transport: (any ClientTransport)?
    var mirror: SessionState?
    var lastWelcome: Welcome?
    var nextRef = 1
    var pending: [Int: (type: String, continuation: CheckedContinuation<Ack, any Error>)] = [:]
    var isClosed = false
    /// The token joins carry: the configured one until ``refreshToken(_:)``.
    var currentToken: String?
    weak var delegateStorage: (any MeridianClientDelegate)?

    /// Every update in order; finishes when the client is closed or gives up reconnecting.
    public let updates: AsyncStream<ClientUpdate>
    let updatesContinuation: AsyncStream<ClientUpdate>.Continuation

    /// A client whose connections come from `transport` (called again for each reconnect).
    public init(configuration: ClientConfiguration, transport: @escaping @Sendable () -> any ClientTransport) {
        self.configuration = configuration
        self.makeTransport = transport
        self.currentToken = configuration.token
        (updates, updatesContinuation) = AsyncStream.makeStream(bufferingPolicy: .unbounded)
    }

    /// A client of the server at `host:port` over libwebsockets.
    public convenience init(host: String = "127.0.0.1", port: Int, configuration: ClientConfiguration) {
        self.init(configuration: configuration) { LWSClientTransport(host: host, port: port) }
    }

    public var delegate: (any MeridianClientDelegate)? {
        get { lock.withLock { delegateStorage } }
        set { lock.withLock { delegateStorage = newValue } }
    }

    /// The mirror of the session (nil before the first join).
    public var state: SessionState? { lock.withLock { mirror } }

    /// This connection's participant id and the session epoch, from the latest welcome.
    public var welcome: Welcome? { lock.withLock { lastWelcome } }

    /// Connects and joins; returns the welcome. Then keeps the session mirrored until ``close()``.
    @discardableResult
    public func connect() throws -> Welcome {
        let (t, welcome) = try handshake(resume: nil)
        lock.lock()
        guard !isClosed else { lock.unlock(); t.close(); throw ClientError.closed }
        transport = t
        adopt(welcome)
        lock.unlock()
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
            lock.lock()
            guard !isClosed, let t = transport else {
                lock.unlock()
                continuation.resume(throwing: isClosed ? ClientError.closed : ClientError.disconnected)
                return
            }
            let ref = nextRef
            nextRef += 1
            pending[ref] = (request.type, continuation)
            lock.unlock()
            t.send(request.encoded(ref: ref))
            let timeout = configuration.requestTimeout
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout.timeInterval) { [weak self] in
                self?.finish(ref: ref) { .failure(ClientError.timeout($0)) }
            }
        }
    }

    /// Hands the server a fresh token before the current one expires (`token.refresh`);
    /// later reconnects join with it.
    @discardableResult
    public func refreshToken(_ token: String) async throws -> Ack {
        let ack = try await send(.refreshToken(token))
        lock.withLock { currentToken = token }
        return ack
    }

    /// Closes the connection and stops reconnecting. Idempotent.
    public func close() {
        lock.lock()
        guard !isClosed else { lock.unlock(); return }
        isClosed = true
        let t = transport
        transport = nil
        lock.broadcast()
        lock.unlock()
        t?.close()
        failPending(.closed)
    }

    deinit { updatesContinuation.finish() }

    // MARK: Internals shared with the reader.

    /// Installs a welcome: a fresh snapshot replaces the mirror; a resume keeps it. Lock held.
    func adopt(_ welcome: Welcome) {
        lastWelcome = welcome
        if !welcome.resumed || mirror == nil {
            mirror = SessionState(snapshot: welcome.snapshot ?? .object(["seq": .number(Double(welcome.seq))]))
        }
    }

    func emit(_ update: ClientUpdate) {
        updatesContinuation.yield(update)
        if let d = delegate { d.client(self, didReceive: update) }
    }

    func finish(ref: Int, _ result: (String) -> Result<Ack, any Error>) {
        lock.lock()
        let entry = pending.removeValue(forKey: ref)
        lock.unlock()
        if let entry { entry.continuation.resume(with: result(entry.type)) }
    }

    func failPending(_ error: ClientError) {
        lock.lock()
        let all = pending
        pending.removeAll()
        lock.unlock()
        for entry in all.values { entry.continuation.resume(throwing: error) }
    }
}

extension Duration {
    var timeInterval: TimeInterval {
        let c = components
        return TimeInterval(c.seconds) + TimeInterval(c.attoseconds) / 1e18
    }
}
