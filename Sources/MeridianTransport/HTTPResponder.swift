import Synchronization

/// Answers one HTTP request, at once or later, from any thread.
///
/// The handler gets one with each request (``TransportHandler/transport(_:handle:responder:)``)
/// and calls ``respond(_:)`` once: during the call, the answer is written by the callback that
/// delivered the request; later, from any thread, it is handed to the service thread with
/// ``WebSocketServer/execute(_:)`` and written there. Only the first answer counts. A client
/// that has gone by then (or a server that has stopped) loses nothing but the answer. A
/// responder released without an answer answers 500, so a request is never left hanging.
public final class HTTPResponder: Sendable {
    private let server: WebSocketServer
    /// The connection's id in lws's per-session memory, and the request's serial on it.
    private let connection: UInt64
    private let serial: UInt64
    private let answered = Atomic<Bool>(false)

    init(server: WebSocketServer, connection: UInt64, serial: UInt64) {
        self.server = server
        self.connection = connection
        self.serial = serial
    }

    /// Sends `response` as the answer; ignored after the first answer.
    public func respond(_ response: HTTPResponse) {
        guard answered.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else { return }
        Self.deliver(response, server: server, connection: connection, serial: serial)
    }

    deinit {
        if !answered.load(ordering: .acquiring) {
            Self.deliver(.unanswered, server: server, connection: connection, serial: serial)
        }
    }

    private static func deliver(_ response: HTTPResponse, server: WebSocketServer, connection: UInt64, serial: UInt64) {
        let answered = server.serviceThread.withLoopIfCurrent { loop in
            loop.answer(response, connection: connection, serial: serial)
        }
        if answered == nil {
            server.execute { loop in loop.answer(response, connection: connection, serial: serial) }
        }
    }
}

extension HTTPResponse {
    static let unanswered = HTTPResponse.json(500, #"{"error":"internal","message":"the request was not answered"}"#)
}
