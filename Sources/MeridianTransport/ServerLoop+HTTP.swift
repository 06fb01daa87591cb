#if canImport(Glibc)
import Glibc
#endif
internal import CLibWebSockets

/// One HTTP request on a connection, from its arrival to its answer. The answer's body lives
/// in C memory with LWS_PRE headroom until the connection's next request or close, so lws may
/// keep reading it after `lws_write`.
final class HTTPExchange {
    let wsi: OpaquePointer
    /// Tells a responder's answer for this request from one for an earlier request on the same
    /// keep-alive connection.
    let serial: UInt64
    /// True while the handler is being asked: an answer given meanwhile is written by the
    /// callback that delivered the request, as soon as the handler returns.
    var asking = false
    /// The answer given while `asking`.
    var immediate: HTTPResponse?
    private(set) var buffer: UnsafeMutableRawPointer?
    private(set) var bodyCount = 0
    /// Answered later: the headers still have to be written, at the next writable callback.
    var headersPending = false
    var status = 0
    var contentType = ""
    var headers: [(name: String, value: String)] = []
    /// Close the connection once the response is written (its request body was not read).
    var closeAfter = false
    /// Body completions offered again for this request within one pass, and that pass.
    var repeatedCompletions = 0
    var repeatPass: UInt64 = 0
    /// A connection lws handed over raw (ServerLoop+RawHTTP.swift): its bytes so far, until the
    /// request line is whole; the answer is written as raw bytes, then the connection closes.
    var raw = false
    var received: [UInt8] = []
    var lineRead = false
    /// The answer's last bytes were handed to lws (raw: the whole answer).
    var written = false

    init(wsi: OpaquePointer, serial: UInt64) {
        self.wsi = wsi
        self.serial = serial
    }

    var answered: Bool { buffer != nil }

    /// Takes the answer: its body into C memory.
    func prepare(_ response: HTTPResponse, headroom: Int) {
        let buffer = malloc(headroom + max(response.body.count, 1))!
        response.body.withUnsafeBytes { source in
            if let base = source.baseAddress { (buffer + headroom).copyMemory(from: base, byteCount: response.body.count) }
        }
        self.buffer = buffer
        bodyCount = response.body.count
        status = response.status
        contentType = response.contentType
        headers = response.headers
    }

    deinit { free(buffer) }
}

extension ServerLoop {
    /// LWS_CALLBACK_HTTP: ask for the answer; a request with a body is asked once it is whole.
    func httpRequest(
        wsi: OpaquePointer, user: UnsafeMutableRawPointer?, input: UnsafeMutableRawPointer?, length: Int
    ) -> Int32 {
        guard let user else { return -1 }
        var uri: UnsafeMutablePointer<CChar>?
        var uriLength: Int32 = 0
        _ = lws_http_get_uri_and_method(wsi, &uri, &uriLength)
        let path: String
        if let uri, uriLength > 0 {
            path = String(decoding: UnsafeRawBufferPointer(start: uri, count: Int(uriLength)), as: UTF8.self)
        } else if let input {
            path = String(cString: input.assumingMemoryBound(to: CChar.self))
        } else {
            path = "/"
        }
        var request = HTTPRequest(method: httpMethod(wsi), path: path, query: queryString(wsi))
        request.authorization = httpHeader(wsi, WSI_TOKEN_HTTP_AUTHORIZATION)
        var id = user.load(as: UInt64.self)
        if id == 0 {
            id = nextHTTPID
            nextHTTPID += 1
            user.storeBytes(of: id, as: UInt64.self)
        }
        let exchange = HTTPExchange(wsi: wsi, serial: nextHTTPID)
        nextHTTPID += 1
        httpExchanges[id] = exchange
        // lws ends the target at a percent-decoded CR or LF (`/api/sessions/%0D/settings`) and
        // skips the rest of the request line: what is left names another resource. Such a
        // request has no HTTP version; it is refused whole rather than answered for that path.
        if lws_hdr_total_length(wsi, WSI_TOKEN_HTTP) == 0 { return respond(exchange, .truncatedRequestLine, closeAfter: true) }
        // A request with a body is answered once all of it is in, whatever its method. Answered
        // sooner, lws 4.1.6 discards the rest of the body after the answer, and a next request
        // read with the end of that body is offered to the body-completion callback again and
        // again, consuming nothing: the service thread served nothing else.
        if let length = contentLength(wsi), length > 0 {
            // A body announced beyond the limit is refused at once; the connection closes after the answer.
            guard length <= configuration.maxHTTPBodyBytes else { return respond(exchange, .bodyTooLarge, closeAfter: true) }
            httpBodies[id] = PendingHTTPBody(request)
            return 0
        }
        return ask(request, exchange, id: id)
    }

    /// Answers /healthz and /readyz itself and asks the handler for anything else. Writes the
    /// answer now if it came during the call; otherwise `answer` writes it when it comes.
    func ask(_ request: HTTPRequest, _ exchange: HTTPExchange, id: UInt64) -> Int32 {
        guard let response = answerNow(request, exchange, id: id) else { return 0 }
        return respond(exchange, response)
    }

    /// The answer to `request` if it is known during the call: the transport's own paths, or
    /// what the handler answered at once; nil when the handler answers later.
    func answerNow(_ request: HTTPRequest, _ exchange: HTTPExchange, id: UInt64) -> HTTPResponse? {
        if let own = ownAnswer(request) { return own }
        guard let handler else { return .notFound }
        exchange.asking = true
        handler.transport(self, handle: request, responder: HTTPResponder(server: server, connection: id, serial: exchange.serial))
        exchange.asking = false
        return exchange.immediate
    }

    /// /healthz and /readyz (GET and HEAD only).
    private func ownAnswer(_ request: HTTPRequest) -> HTTPResponse? {
        guard request.path == "/healthz" || request.path == "/readyz" else { return nil }
        guard request.method == "GET" || request.method == "HEAD" else {
            return .methodNotAllowed(request, allow: ["GET", "HEAD"])
        }
        if request.path == "/healthz" { return .healthy }
        if draining { return .draining }
        if let reason = configuration.unreadiness?() { return .notReady(reason) }
        return .ready
    }

    /// A responder's answer, on the service thread. Dropped if the client has gone (its
    /// exchange was removed when the connection closed) or the request was answered already.
    func answer(_ response: HTTPResponse, connection id: UInt64, serial: UInt64) {
        guard let exchange = httpExchanges[id], exchange.serial == serial, !exchange.answered, exchange.immediate == nil else { return }
        if exchange.asking {
            exchange.immediate = response
            return
        }
        if exchange.raw { return respondRaw(exchange, response) }
        exchange.prepare(response, headroom: headroom)
        exchange.headersPending = true
        lws_callback_on_writable(exchange.wsi)
    }

    /// Writes the response's headers now (from the callback that delivered the request) and
    /// its body when writable.
    func respond(_ exchange: HTTPExchange, _ response: HTTPResponse, closeAfter: Bool = false) -> Int32 {
        exchange.prepare(response, headroom: headroom)
        exchange.closeAfter = closeAfter
        if writeHeaders(exchange) { return 1 }
        lws_callback_on_writable(exchange.wsi)
        return 0
    }

    /// Status, content type and length; true if lws refused them.
    private func writeHeaders(_ exchange: HTTPExchange) -> Bool {
        var header = [UInt8](repeating: 0, count: headroom + 1024)
        return header.withUnsafeMutableBufferPointer { buffer -> Bool in
            let start = buffer.baseAddress! + headroom
            let end = buffer.baseAddress! + buffer.count - 1
            var cursor: UnsafeMutablePointer<UInt8>? = start
            if lws_add_http_common_headers(
                exchange.wsi, UInt32(clamping: exchange.status), exchange.contentType,
                lws_filepos_t(exchange.bodyCount), &cursor, end) != 0 {
                return true
            }
            for (name, value) in exchange.headers where HTTPResponse.isHeaderSafe(name) && HTTPResponse.isHeaderSafe(value) {
                let added = "\(name):".withCString { namePointer in
                    Array(value.utf8).withUnsafeBufferPointer { valueBytes in
                        lws_add_http_header_by_name(
                            exchange.wsi, UnsafeRawPointer(namePointer).assumingMemoryBound(to: UInt8.self),
                            valueBytes.baseAddress, Int32(clamping: valueBytes.count), &cursor, end)
                    }
                }
                if added != 0 { return true }
            }
            return lws_finalize_write_http_header(exchange.wsi, start, &cursor, end) != 0
        }
    }

    /// LWS_CALLBACK_HTTP_WRITEABLE: the headers of an answer that came later, then (at the
    /// next writable) the whole body in one final write.
    func httpWritable(wsi: OpaquePointer, user: UnsafeMutableRawPointer?) -> Int32 {
        guard let id = user?.load(as: UInt64.self), id != 0, let exchange = httpExchanges[id],
              let buffer = exchange.buffer else { return 0 }
        if exchange.headersPending {
            exchange.headersPending = false
            if writeHeaders(exchange) { return -1 }
            lws_callback_on_writable(wsi)
            return 0
        }
        let body = (buffer + headroom).assumingMemoryBound(to: UInt8.self)
        if lws_write(wsi, body, exchange.bodyCount, LWS_WRITE_HTTP_FINAL) < 0 { return -1 }
        exchange.written = true
        if exchange.closeAfter { return -1 }
        let result: Int32 = lws_http_transaction_completed(wsi) != 0 ? -1 : 0
        endDrainIfDone()
        return result
    }

    /// True while a request is being read or answered: its body is arriving, its answer has not
    /// come or not been written whole, or lws still holds part of it. A drain waits for these.
    var httpInFlight: Bool {
        guard httpBodies.isEmpty else { return true }
        return httpExchanges.values.contains { exchange in
            exchange.raw || !exchange.written || lws_partial_buffered(exchange.wsi) != 0
        }
    }

    /// A request header lws parsed, or nil if absent.
    func httpHeader(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let total = Int(lws_hdr_total_length(wsi, token))
        guard total > 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: total + 1)
        let copied = lws_hdr_copy(wsi, &buffer, Int32(clamping: buffer.count), token)
        guard copied > 0 else { return nil }
        return String(decoding: buffer.prefix(Int(copied)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func queryString(_ wsi: OpaquePointer) -> String {
        let total = Int(lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS))
        guard total > 0 else { return "" }
        var buffer = [CChar](repeating: 0, count: total + 16)
        let copied = lws_hdr_copy(wsi, &buffer, Int32(clamping: buffer.count), WSI_TOKEN_HTTP_URI_ARGS)
        guard copied > 0 else { return "" }
        return String(decoding: buffer.prefix(Int(copied)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The request's method, from whichever method header lws parsed (lws answers a method it does
/// not know in the raw fallback, ServerLoop+RawHTTP.swift, so none is missing here). (The
/// return value of `lws_http_get_uri_and_method` is an index into a table
/// whose contents depend on build options, not a token.)
private func httpMethod(_ wsi: OpaquePointer) -> String {
    let methods: [(lws_token_indexes, String)] = [
        (WSI_TOKEN_GET_URI, "GET"), (WSI_TOKEN_POST_URI, "POST"), (WSI_TOKEN_OPTIONS_URI, "OPTIONS"),
        (WSI_TOKEN_PUT_URI, "PUT"), (WSI_TOKEN_PATCH_URI, "PATCH"), (WSI_TOKEN_DELETE_URI, "DELETE"),
        (WSI_TOKEN_HEAD_URI, "HEAD"), (WSI_TOKEN_CONNECT, "CONNECT"),
    ]
    // Never taken for a GET: a request whose method is not found here is refused (405) by every path.
    return methods.first { lws_hdr_total_length(wsi, $0.0) > 0 }?.1 ?? ""
}
