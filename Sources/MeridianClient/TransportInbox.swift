import Foundation

/// What an asynchronous transport hands its blocking reader: the connection's progress and
/// its messages, in order, under one condition. Written from the transport's task, read by
/// the client's reader thread (``ClientTransport/receive(timeout:)``).
final class TransportInbox: @unchecked Sendable {
    enum Phase: Equatable { case idle, connecting, open, failed(ClientError), ended }

    private let condition = NSCondition()
    private var phase = Phase.idle
    private var messages: [String] = []
    private var head = 0
    private var closeCode: UInt16?

    /// Moves from idle to connecting; false if the inbox was used before.
    func beginConnecting() -> Bool {
        condition.withLock {
            guard phase == .idle else { return false }
            phase = .connecting
            return true
        }
    }

    /// Whether the connection opened (and may still be open).
    var wasOpened: Bool { condition.withLock { phase == .open || phase == .ended } }

    /// The upgrade succeeded; false when the connect was given up in the meantime (the
    /// connection should then be dropped).
    func opened() -> Bool {
        update {
            guard phase == .connecting else { return false }
            phase = .open
            return true
        }
    }

    func deliver(_ text: String) { update { messages.append(text) } }

    /// The connection is over: with the server's close code, or nil when it ended without one.
    /// Before it opened this is a failure, with `reason`.
    func ended(code: UInt16?, reason: @autoclosure () -> String) {
        update {
            switch phase {
            case .idle, .connecting: phase = .failed(.connectionFailed(reason()))
            case .open: phase = .ended; closeCode = code
            case .failed, .ended: break
            }
        }
    }

    /// Gives up connecting (a timeout or a close): a later ``opened()`` returns false.
    func abandon(_ error: ClientError) {
        update { if phase == .connecting || phase == .idle { phase = .failed(error) } }
    }

    /// Blocks until the connection opened or failed, or `deadline`: nil then.
    func waitUntilOpen(deadline: Date) -> Result<Void, ClientError>? {
        condition.withLock {
            while true {
                switch phase {
                case .open, .ended: return .success(())
                case .failed(let error): return .failure(error)
                case .idle, .connecting:
                    if !condition.wait(until: deadline) { return nil }
                }
            }
        }
    }

    /// The next message, or `.closed` once the connection is over and every message was taken;
    /// nil at `deadline`.
    func next(deadline: Date) -> TransportMessage? {
        condition.withLock {
            while true {
                if head < messages.count {
                    let text = messages[head]
                    head += 1
                    if head > 1024, head * 2 > messages.count {
                        messages.removeFirst(head)
                        head = 0
                    }
                    return .text(text)
                }
                switch phase {
                case .ended: return .closed(code: closeCode)
                case .failed: return .closed(code: nil)
                case .idle, .connecting, .open:
                    if !condition.wait(until: deadline) { return nil }
                }
            }
        }
    }

    private func update<T>(_ change: () -> T) -> T {
        condition.lock()
        defer {
            condition.broadcast()
            condition.unlock()
        }
        return change()
    }
}
