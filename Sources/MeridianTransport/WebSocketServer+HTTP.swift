#if canImport(Glibc)
import Glibc
#endif
internal import CLibWebSockets

/// One HTTP response in flight. The body lives in C memory with LWS_PRE headroom until the
/// connection's next request or close, so lws may keep reading it after `lws_write`.
final class HTTPExchange {
    let buffer: UnsafeMutableRawPointer
    let bodyCount: Int
    /// Close the connection once the response is written (its request body was not read).
    var closeAfter = false

    init(body: [UInt8], headroom: Int) {
        buffer = malloc(headroom + max(body.count, 1))!
        bodyCount = body.count
        body.withUnsafeBytes { source in
            if let base = source.baseAddress { (buffer + headroom).copyMemory(from: base, byteCount: body.count) }
        }
    }

    deinit { free(buffer) }
}

extension WebSocketServer {
    /// Answers /healthz and /readyz itself, asks the handler for anything else.
    func response(to request: HTTPRequest) -> HTTPResponse {
        switch request.path {
        case "/healthz": return .healthy
        case "/readyz": return draining ? .draining : .ready
        default: return handler?.transport(self, handle: request) ?? .notFound
        }
    }

    /// LWS_CALLBACK_HTTP: build the response, write its headers now and its body when writable.
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
        if ["POST", "PUT", "PATCH"].contains(request.method), let length = contentLength(wsi), length > 0 {
            // A body announced beyond the limit is refused at once; the connection closes after the answer.
            guard length <= configuration.maxHTTPBodyBytes else { return respond(wsi: wsi, id: id, .bodyTooLarge, closeAfter: true) }
            httpBodies[id] = PendingHTTPBody(request)
            return 0
        }
        return respond(wsi: wsi, id: id, response(to: request))
    }

    /// Writes the response's headers now and its body when writable.
    func respond(wsi: OpaquePointer, id: UInt64, _ response: HTTPResponse, closeAfter: Bool = false) -> Int32 {
        let exchange = HTTPExchange(body: response.body, headroom: headroom)
        exchange.closeAfter = closeAfter
        httpExchanges[id] = exchange

        var header = [UInt8](repeating: 0, count: headroom + 1024)
        let failed = header.withUnsafeMutableBufferPointer { buffer -> Bool in
            let start = buffer.baseAddress! + headroom
            let end = buffer.baseAddress! + buffer.count - 1
            var cursor: UnsafeMutablePointer<UInt8>? = start
            if lws_add_http_common_headers(
                wsi, UInt32(response.status), response.contentType,
                lws_filepos_t(response.body.count), &cursor, end) != 0 {
                return true
            }
            return lws_finalize_write_http_header(wsi, start, &cursor, end) != 0
        }
        if failed { return 1 }
        lws_callback_on_writable(wsi)
        return 0
    }

    /// LWS_CALLBACK_HTTP_WRITEABLE: the whole body in one final write.
    func httpWritable(wsi: OpaquePointer, user: UnsafeMutableRawPointer?) -> Int32 {
        guard let id = user?.load(as: UInt64.self), id != 0, let exchange = httpExchanges[id] else { return 0 }
        let body = (exchange.buffer + headroom).assumingMemoryBound(to: UInt8.self)
        if lws_write(wsi, body, exchange.bodyCount, LWS_WRITE_HTTP_FINAL) < 0 { return -1 }
        if exchange.closeAfter { return -1 }
        return lws_http_transaction_completed(wsi) != 0 ? -1 : 0
    }

    /// A request header lws parsed, or nil if absent.
    func httpHeader(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
        let total = Int(lws_hdr_total_length(wsi, token))
        guard total > 0 else { return nil }
        var buffer = [CChar](repeating: 0, count: total + 1)
        let copied = lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token)
        guard copied > 0 else { return nil }
        return String(decoding: buffer.prefix(Int(copied)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    private func queryString(_ wsi: OpaquePointer) -> String {
        let total = Int(lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS))
        guard total > 0 else { return "" }
        var buffer = [CChar](repeating: 0, count: total + 16)
        let copied = lws_hdr_copy(wsi, &buffer, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS)
        guard copied > 0 else { return "" }
        return String(decoding: buffer.prefix(Int(copied)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

/// The request's method, from whichever method header lws parsed. (The
/// return value of `lws_http_get_uri_and_method` is an index into a table
/// whose contents depend on build options, not a token.)
private func httpMethod(_ wsi: OpaquePointer) -> String {
    let methods: [(lws_token_indexes, String)] = [
        (WSI_TOKEN_GET_URI, "GET"), (WSI_TOKEN_POST_URI, "POST"), (WSI_TOKEN_OPTIONS_URI, "OPTIONS"),
        (WSI_TOKEN_PUT_URI, "PUT"), (WSI_TOKEN_PATCH_URI, "PATCH"), (WSI_TOKEN_DELETE_URI, "DELETE"),
        (WSI_TOKEN_HEAD_URI, "HEAD"),
    ]
    return methods.first { lws_hdr_total_length(wsi, $0.0) > 0 }?.1 ?? "GET"
}
