import Glibc
import MeridianHTTP
internal import CLibWebSockets

/// Requests libwebsockets would drop without a word: it refuses to decode `%00` in a request
/// target and closes the connection, with no callback before. A new connection's first bytes are
/// looked at (without reading them) when the handshake gate lets it through (ServerLoop+Input.swift);
/// a request line holding `%00` is answered here, from the line alone — 404 when the NUL is in
/// the path, 400 `invalid_field` naming the query parameter when it is in the query — written
/// straight to the socket, and the connection closed. The gate runs on the libev loop without
/// TLS (the default); elsewhere lws reads the bytes first.
extension ServerLoop {
    /// True when the connection's request was answered here (the connection is then closing).
    func answerBeforeLWS(_ wsi: OpaquePointer) -> Bool {
        let socket = lws_get_socket_fd(wsi)
        guard socket >= 0 else { return false }
        var bytes = [UInt8](repeating: 0, count: HTTPRequestLine.maxLength)
        let peeked = bytes.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_PEEK | MSG_DONTWAIT)) }
        guard peeked > 0, case .line(let line) = HTTPRequestLine.parse(bytes[..<peeked]), let place = line.encodedNUL else { return false }
        // The bytes lws would have read are taken off the socket: closing it with unread input
        // would reset the connection and lose the answer.
        _ = bytes.withUnsafeMutableBytes { recv(socket, $0.baseAddress, peeked, Int32(MSG_DONTWAIT)) }
        let message = Self.nulAnswer(place).closingMessage
        _ = message.withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
        shutdown(socket, Int32(SHUT_WR))
        counters.earlyAnswers += 1
        lws_set_timeout(wsi, PENDING_TIMEOUT_CLOSE_SEND, -1) // LWS_TO_KILL_ASYNC: closed at once, outside this pass
        return true
    }

    static func nulAnswer(_ place: HTTPRequestLine.NULPlace) -> HTTPResponse {
        switch place {
        case .path:
            return .json(404, #"{"error":"not_found","message":"no such path: the path holds a NUL character (%00)"}"#)
        case .parameter(let name):
            let field = HTTPResponse.jsonEscaped(name.prefix(64))
            return .json(400, #"{"error":"invalid_field","field":"\#(field)","message":"\#(field): a NUL character (%00) is not allowed in a URL"}"#)
        }
    }
}
