import DequeModule
import Dispatch
import MeridianTransportCore
import MeridianSync

/// What a ``WebSocketClient``'s service thread hands to the threads that use the client: the
/// connection's phase, the messages received and how the connection ended.
///
/// The state is under a mutex. The client's API blocks (``WebSocketClient/connect(timeout:)``
/// waits for the handshake, ``WebSocketClient/receive(timeout:)`` for a message), so two
/// semaphores carry the wake-ups: `settled` is signalled once, when the connection opens or
/// fails; `arrived` once per message and once when the connection ends. A waiter always
/// re-checks the state after waking, so a signal that finds nothing new costs one more look.
final class ClientMailbox: Sendable {
    enum Phase {
        case idle
        case connecting
        case open
        case failed(TransportError)
    }

    private struct State {
        var phase = Phase.idle
        var inbox = Deque<WebSocketClient.Message>()
        /// Set once the connection is over; returned after every message before it.
        var closed: WebSocketClient.Message?

        var isOver: Bool {
            if closed != nil { return true }
            if case .failed = phase { return true }
            return false
        }
    }

    private let state = Locked(State())
    private let settled = DispatchSemaphore(value: 0)
    private let arrived = DispatchSemaphore(value: 0)

    // MARK: Users of the client

    /// idle → connecting; false if the client was connected before.
    func beginConnecting() -> Bool {
        state.withLock { state in
            guard case .idle = state.phase else { return false }
            state.phase = .connecting
            return true
        }
    }

    /// True while connecting or open (also after the server closed: the thread may still run).
    var isConnectingOrOpen: Bool {
        state.withLock { state in
            switch state.phase {
            case .connecting, .open: return true
            case .idle, .failed: return false
            }
        }
    }

    /// Waits until the connection opened or failed, or until `deadline`; returns the phase then.
    func waitUntilOpenOrFailed(deadline: DispatchTime) -> Phase {
        while true {
            let phase = state.withLock { $0.phase }
            if case .connecting = phase {
                if settled.wait(timeout: deadline) == .timedOut { return state.withLock { $0.phase } }
                continue
            }
            return phase
        }
    }

    /// The next message, else the closing message once the connection is over. Throws
    /// ``TransportError/notConnected`` before a connection or after a failed one,
    /// ``TransportError/timeout`` when nothing came by `deadline`.
    func receive(deadline: DispatchTime) throws -> WebSocketClient.Message {
        var waited = false
        while true {
            let next = state.withLock { state -> Result<WebSocketClient.Message, TransportError>? in
                if let message = state.inbox.popFirst() { return .success(message) }
                if let closed = state.closed { return .success(closed) }
                switch state.phase {
                case .idle, .failed: return .failure(.notConnected)
                case .connecting, .open: return nil
                }
            }
            if let next {
                // The end is news for every waiting receiver: pass the wake-up on.
                if waited, state.withLock({ $0.isOver }) { arrived.signal() }
                return try next.get()
            }
            if arrived.wait(timeout: deadline) == .timedOut {
                if let late = state.withLock({ $0.inbox.popFirst() ?? $0.closed }) { return late }
                throw TransportError.timeout
            }
            waited = true
        }
    }

    /// Makes the phase failed with `error`, whatever it was (a connect that timed out).
    func fail(_ error: TransportError) {
        state.withLock { $0.phase = .failed(error) }
        arrived.signal()
    }

    /// The connection could not be started: makes the phase failed with `error` if it had not
    /// opened yet, and the connection over. Returns the error the phase holds then (an earlier,
    /// more precise one if lws reported it first).
    func failIfConnecting(_ error: TransportError) -> TransportError {
        let (changed, failure) = state.withLock { state -> (Bool, TransportError) in
            if state.closed == nil { state.closed = .closed(code: nil, reason: "") }
            switch state.phase {
            case .connecting:
                state.phase = .failed(error)
                return (true, error)
            case .failed(let earlier):
                return (false, earlier)
            case .idle, .open:
                return (false, error)
            }
        }
        if changed {
            settled.signal()
            arrived.signal()
        }
        return failure
    }

    // MARK: The service thread

    /// The handshake completed.
    func opened() {
        state.withLock { state in
            if case .connecting = state.phase { state.phase = .open }
        }
        settled.signal()
    }

    /// One whole text message.
    func received(_ text: String) {
        state.withLock { $0.inbox.append(.text(text)) }
        arrived.signal()
    }

    /// The connection is over: `failure` is the error of a connection that never opened, and
    /// `code`/`reason` the server's close frame (nil if none). Only the first end counts.
    func ended(failure: TransportError, code: UInt16? = nil, reason: String = "") {
        let failed = state.withLock { state -> Bool in
            if state.closed == nil { state.closed = .closed(code: code, reason: reason) }
            guard case .connecting = state.phase else { return false }
            state.phase = .failed(failure)
            return true
        }
        if failed { settled.signal() }
        arrived.signal()
    }
}
