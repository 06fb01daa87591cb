import MeridianHTTP
internal import CLibWebSockets

/// Requests libwebsockets does not parse as HTTP. lws knows eight methods; at the first byte of
/// any other (TRACE, QUERY, …) it gives up, and for CONNECT it switches to raw once the headers
/// are read. Left alone it answered the first with an HTML 403 and held the second open
/// forever. With `LWS_SERVER_OPTION_FALLBACK_TO_APPLY_LISTEN_ACCEPT_CONFIG` both come here, to
/// the raw protocol (`ProtocolID.rawHTTP`), bytes and all: the request line is read
/// (`HTTPRequestLine`), answered like any request (every path of ours refuses such a method:
/// 405 with `Allow`, or 404), written as raw bytes, and the connection closed.
extension ServerLoop {
    /// LWS_CALLBACK_RAW_ADOPT: the connection becomes a raw exchange, with the handshake's time
    /// limit to send its request line (lws sets none on a raw connection).
    func rawAdopted(wsi: OpaquePointer, user: UnsafeMutableRawPointer?) -> Int32 {
        guard let user else { return -1 }
        let id = nextHTTPID
        nextHTTPID += 2
        user.storeBytes(of: id, as: UInt64.self)
        let exchange = HTTPExchange(wsi: wsi, serial: id + 1)
        exchange.raw = true
        httpExchanges[id] = exchange
        lws_set_timeout(wsi, PENDING_TIMEOUT_USER_OK, Int32(clamping: max(configuration.handshakeTimeout.clampedSeconds, 1)))
        return 0
    }

    /// LWS_CALLBACK_RAW_RX: bytes of the request, the first of them those lws had read already.
    func rawReceived(user: UnsafeMutableRawPointer?, input: UnsafeMutableRawPointer?, length: Int) -> Int32 {
        guard let id = user?.load(as: UInt64.self), id != 0, let exchange = httpExchanges[id] else { return -1 }
        guard !exchange.lineRead else { return 0 }
        if let input, length > 0 {
            exchange.received.append(contentsOf: UnsafeRawBufferPointer(start: input, count: min(length, HTTPRequestLine.maxLength)))
        }
        switch HTTPRequestLine.parse(exchange.received) {
        case .incomplete:
            return 0
        case .invalid:
            exchange.lineRead = true
            respondRaw(exchange, .badRequest)
        case .line(let line):
            exchange.lineRead = true
            exchange.received = []
            let request = HTTPRequest(method: line.method, path: line.path, query: line.query)
            if let response = answerNow(request, exchange, id: id) { respondRaw(exchange, response) }
        }
        return 0
    }

    /// The answer, as the raw bytes of an HTTP/1.1 response that closes the connection.
    func respondRaw(_ exchange: HTTPExchange, _ response: HTTPResponse) {
        exchange.prepare(HTTPResponse(status: response.status, contentType: response.contentType, body: response.closingMessage), headroom: headroom)
        lws_callback_on_writable(exchange.wsi)
    }

    /// LWS_CALLBACK_RAW_WRITEABLE: the whole answer in one write; at the next writable (lws
    /// has sent what it buffered), the close.
    func rawWritable(wsi: OpaquePointer, user: UnsafeMutableRawPointer?) -> Int32 {
        guard let id = user?.load(as: UInt64.self), id != 0, let exchange = httpExchanges[id] else { return -1 }
        guard let buffer = exchange.buffer else { return 0 }
        if exchange.written { return -1 }
        exchange.written = true
        let bytes = (buffer + headroom).assumingMemoryBound(to: UInt8.self)
        if lws_write(wsi, bytes, exchange.bodyCount, LWS_WRITE_HTTP) < 0 { return -1 }
        lws_callback_on_writable(wsi)
        return 0
    }

    /// LWS_CALLBACK_RAW_CLOSE
    func rawClosed(user: UnsafeMutableRawPointer?) {
        guard let id = user?.load(as: UInt64.self), id != 0 else { return }
        httpExchanges[id] = nil
        user?.storeBytes(of: 0, as: UInt64.self)
        endDrainIfDone()
    }
}

extension HTTPResponse {
    static let badRequest = HTTPResponse.json(400, #"{"error":"bad_request","message":"not an HTTP/1.1 request line"}"#)

    /// The reason phrase of the statuses the server sends.
    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 409: "Conflict"
        case 413: "Content Too Large"
        case 500: "Internal Server Error"
        case 503: "Service Unavailable"
        default: "Status"
        }
    }
}
