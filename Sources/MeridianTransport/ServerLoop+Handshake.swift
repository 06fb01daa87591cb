import Foundation
internal import CLibWebSockets

/// A connection the limits count, from its accepted upgrade until lws destroys it.
struct AdmittedConnection {
    var handshake: Handshake
}

extension ServerLoop {
    /// LWS_CALLBACK_HTTP_CONFIRM_UPGRADE, on the HTTP protocol before lws picks a subprotocol:
    /// the first two checks (draining, subprotocol). lws would drop an upgrade that offers only
    /// subprotocols it lacks (`chat`, `meridian.v2`) with no answer at all, before
    /// FILTER_PROTOCOL_CONNECTION, so the subprotocol is checked here. A refusal writes the
    /// whole answer and returns -1 (lws hangs up); not > 0, whose keep-alive path would have lws
    /// parse on after the answer.
    func confirmUpgrade(wsi: OpaquePointer, to upgrade: UnsafeMutableRawPointer?) -> Int32 {
        guard let upgrade, String(cString: upgrade.assumingMemoryBound(to: CChar.self)).lowercased() == "websocket" else {
            return 0
        }
        input.upgrades += 1
        counters.mostUpgradesInAPass = max(counters.mostUpgradesInAPass, input.upgrades)
        if draining {
            _ = refuse(wsi, status: 503, reason: "server shutting down")
            return -1
        }
        guard offeredSubprotocols(wsi).contains(configuration.subprotocol) else {
            _ = refuse(wsi, status: 400, reason: "subprotocol \(configuration.subprotocol) required")
            return -1
        }
        return 0
    }

    /// The subprotocols a client offers in Sec-WebSocket-Protocol (a comma-separated list).
    func offeredSubprotocols(_ wsi: OpaquePointer) -> [String] {
        guard let offered = header(wsi, WSI_TOKEN_PROTOCOL) else { return [] }
        return offered.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }

    /// LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION: the server's checks in order (draining,
    /// subprotocol, Origin, limits), then the handler's. A refusal answers a real HTTP status
    /// before lws closes the connection; returning non-zero stops the upgrade.
    func filterUpgrade(wsi: OpaquePointer) -> Int32 {
        if draining { return refuse(wsi, status: 503, reason: "server shutting down") }
        // An upgrade without Sec-WebSocket-Protocol binds to protocols[0] (HTTP).
        guard lws_get_protocol(wsi)?.pointee.id == ProtocolID.webSocket else {
            return refuse(wsi, status: 400, reason: "subprotocol \(configuration.subprotocol) required")
        }
        let handshake = readHandshake(wsi)
        guard Self.originAllowed(handshake.origin, host: handshake.host, tls: configuration.usesTLS,
                                 allowed: configuration.allowedOrigins) else {
            return refuse(wsi, status: 403, reason: "origin not allowed")
        }
        switch admissions.check(handshake.peer) {
        case .serverFull?: return refuse(wsi, status: 503, reason: "server at its connection limit")
        case .peerFull?: return refuse(wsi, status: 429, reason: "too many connections from this address")
        case nil: break
        }
        if case .refuse(let status, let reason) = handler?.transport(self, shouldAccept: handshake) ?? .accept {
            return refuse(wsi, status: status, reason: reason)
        }
        switch admissions.admit(handshake.peer) {
        case .serverFull?: return refuse(wsi, status: 503, reason: "server at its connection limit")
        case .peerFull?: return refuse(wsi, status: 429, reason: "too many connections from this address")
        case nil: break
        }
        admitted[wsi] = AdmittedConnection(handshake: handshake)
        return 0
    }

    /// Releases the connection's place in the limits. Called from both LWS_CALLBACK_CLOSED and
    /// LWS_CALLBACK_WSI_DESTROY (the latter also covers an upgrade that failed before
    /// ESTABLISHED); the first call wins.
    func releaseAdmission(wsi: OpaquePointer) {
        guard let entry = admitted.removeValue(forKey: wsi) else { return }
        admissions.release(entry.handshake.peer)
    }

    /// Sends `status` with a short JSON body and makes lws drop the connection.
    ///
    /// Not `lws_return_http_status`: during an upgrade lws has not recorded the request's HTTP
    /// version yet and answers "HTTP/1.0", which strict clients (Python websockets) reject.
    /// The answer is small enough to leave in one send on a fresh connection.
    func refuse(_ wsi: OpaquePointer, status: Int, reason: String) -> Int32 {
        counters.refusedHandshakes += 1
        let response = Array(refusalResponse(status: status, reason: reason).utf8)
        var buffer = [UInt8](repeating: 0, count: headroom + response.count)
        buffer.replaceSubrange(headroom..., with: response)
        buffer.withUnsafeMutableBufferPointer { bytes in
            _ = lws_write(wsi, bytes.baseAddress! + headroom, response.count, LWS_WRITE_HTTP_HEADERS)
        }
        return 1
    }

    func readHandshake(_ wsi: OpaquePointer) -> Handshake {
        var name = [CChar](repeating: 0, count: 128)
        let peer = lws_get_peer_simple(wsi, &name, name.count).map { String(cString: $0) } ?? ""
        return Handshake(
            peer: ClientAddress.resolve(peer: peer, forwardedFor: header(wsi, WSI_TOKEN_X_FORWARDED_FOR), trusted: configuration.trustedProxies),
            origin: header(wsi, WSI_TOKEN_ORIGIN),
            host: header(wsi, WSI_TOKEN_HOST),
            authorization: header(wsi, WSI_TOKEN_HTTP_AUTHORIZATION),
            path: header(wsi, WSI_TOKEN_GET_URI) ?? "/",
            query: queryArguments(wsi))
    }

    /// Whether a browser from `origin` may connect: no Origin, same origin, listed, or "*".
    /// An Origin with a `ws:` or `wss:` scheme comes from no browser (browsers send `http(s)://…`
    /// or `null`) but from a client library that fills it in (swift-websocket's does): allowed,
    /// like no Origin.
    static func originAllowed(_ origin: String?, host: String?, tls: Bool, allowed: [String]) -> Bool {
        guard let origin else { return true }
        let normalized = normalizeOrigin(origin)
        if normalized.hasPrefix("ws://") || normalized.hasPrefix("wss://") { return true }
        if let host, normalized == (tls ? "https://" : "http://") + host.lowercased() { return true }
        return allowed.contains { $0 == "*" || normalizeOrigin($0) == normalized }
    }

    private static func normalizeOrigin(_ origin: String) -> String {
        var value = origin.trimmingCharacters(in: .whitespaces).lowercased()
        while value.hasSuffix("/") { value.removeLast() }
        return value
    }
}

/// The whole header, or nil if absent.
func header(_ wsi: OpaquePointer, _ token: lws_token_indexes) -> String? {
    let total = Int(lws_hdr_total_length(wsi, token))
    guard total > 0 else { return nil }
    var buffer = [CChar](repeating: 0, count: total + 1)
    let copied = lws_hdr_copy(wsi, &buffer, Int32(buffer.count), token)
    guard copied >= 0 else { return nil }
    return String(decoding: buffer.prefix(Int(copied)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The URL arguments, one lws fragment per "name=value" (lws has already %-decoded them).
func queryArguments(_ wsi: OpaquePointer) -> [String: String] {
    let total = Int(lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_URI_ARGS))
    guard total > 0 else { return [:] }
    var arguments: [String: String] = [:]
    var buffer = [CChar](repeating: 0, count: total + 1)
    var index: Int32 = 0
    while true {
        let copied = lws_hdr_copy_fragment(wsi, &buffer, Int32(buffer.count), WSI_TOKEN_HTTP_URI_ARGS, index)
        guard copied >= 0 else { break }
        index += 1
        let text = String(decoding: buffer.prefix(Int(copied)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard !text.isEmpty else { continue }
        let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        arguments[String(parts[0])] = parts.count > 1 ? String(parts[1]) : ""
    }
    return arguments
}

/// A complete HTTP/1.1 response refusing an upgrade: `{"error":"handshake_refused","status":…,"message":…}`.
/// A status outside 400...599 becomes 403: a refusal must not look like success.
func refusalResponse(status: Int, reason: String) -> String {
    let status = (400...599).contains(status) ? status : 403
    let body = #"{"error":"handshake_refused","status":\#(status),"message":"\#(jsonEscaped(reason))"}"#
    return "HTTP/1.1 \(status) \(reasonPhrase(status))\r\ncontent-type: application/json\r\n"
        + "content-length: \(body.utf8.count)\r\nconnection: close\r\n\r\n" + body
}

private func reasonPhrase(_ status: Int) -> String {
    switch status {
    case 400: "Bad Request"
    case 401: "Unauthorized"
    case 403: "Forbidden"
    case 404: "Not Found"
    case 429: "Too Many Requests"
    case 500: "Internal Server Error"
    case 503: "Service Unavailable"
    default: "Refused"
    }
}

private func jsonEscaped(_ text: String) -> String {
    var out = ""
    for scalar in text.unicodeScalars {
        switch scalar {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        case "\r": out += "\\r"
        case "\t": out += "\\t"
        case _ where scalar.value < 0x20: out += String(format: "\\u%04x", scalar.value)
        default: out.unicodeScalars.append(scalar)
        }
    }
    return out
}
