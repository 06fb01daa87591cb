import MeridianHTTP
internal import CLibWebSockets

/// An HTTP request whose body is still arriving.
final class PendingHTTPBody {
    var request: HTTPRequest
    var bytes: [UInt8] = []
    var tooLarge = false

    init(_ request: HTTPRequest) { self.request = request }
}

extension ServerLoop {
    /// LWS_CALLBACK_HTTP_BODY: one chunk, kept up to the limit (beyond it, dropped and answered 413).
    func httpBody(user: UnsafeMutableRawPointer?, input: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        guard let id = user?.load(as: UInt64.self), let pending = httpBodies[id], let input, length > 0 else { return 0 }
        if pending.tooLarge || length > configuration.maxHTTPBodyBytes - pending.bytes.count {
            pending.tooLarge = true
            pending.bytes = []
        } else {
            pending.bytes.append(contentsOf: UnsafeRawBufferPointer(start: input, count: length))
        }
        return 0
    }

    /// LWS_CALLBACK_HTTP_BODY_COMPLETION: the request is whole; ask for its answer.
    ///
    /// Called again for the same request, it means lws 4.1.6 holds bytes of a next, pipelined
    /// request read with this one: it offers the connection to this callback on every pass,
    /// consuming nothing, until the answer is written. The connection is then closed after the
    /// answer rather than read on (the client sends the next request again, on a new one).
    /// A request with a body that lws read from such bytes (one pipelined behind another) is
    /// worse: lws offers it again and again within one pass that never ends, and the service
    /// thread served no one else, even after the client left. Past ``repeatLimit`` offers
    /// within a pass the connection is closed, its answer unsent.
    func httpBodyComplete(wsi: OpaquePointer, user: UnsafeMutableRawPointer?) -> Int32 {
        guard let id = user?.load(as: UInt64.self) else { return 0 }
        guard let pending = httpBodies.removeValue(forKey: id) else {
            guard let exchange = httpExchanges[id], !exchange.written else { return 0 }
            exchange.closeAfter = true
            if exchange.repeatPass != servicePasses {
                exchange.repeatPass = servicePasses
                exchange.repeatedCompletions = 0
            }
            exchange.repeatedCompletions += 1
            return exchange.repeatedCompletions > Self.repeatLimit ? -1 : 0
        }
        guard let exchange = httpExchanges[id] else { return 0 }
        guard !pending.tooLarge else { return respond(exchange, .bodyTooLarge, closeAfter: true) }
        var request = pending.request
        request.body = pending.bytes
        return ask(request, exchange, id: id)
    }

    /// Offers of one request's body completion within one pass past which the pass is taken
    /// for one that never ends (a pass that does end offers it a few hundred times at most).
    static let repeatLimit = 10_000

    /// The request's Content-Length, if it sent a valid one.
    func contentLength(_ wsi: OpaquePointer) -> Int? {
        let total = Int(lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_CONTENT_LENGTH))
        guard total > 0, total < 20 else { return nil }
        var buffer = [CChar](repeating: 0, count: total + 1)
        guard lws_hdr_copy(wsi, &buffer, Int32(clamping: buffer.count), WSI_TOKEN_HTTP_CONTENT_LENGTH) > 0 else { return nil }
        return ContentLength.parse(String(decoding: buffer.prefix(total).map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}
