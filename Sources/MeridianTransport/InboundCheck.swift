internal import MeridianProtocol

/// A frame-level violation by the client, and the close it earns (RFC 6455 §7.4.1).
struct ProtocolViolation: Equatable {
    let code: UInt16
    let reason: String

    static let invalidUTF8 = ProtocolViolation(code: CloseCode.invalidPayload, reason: "text message is not valid UTF-8")
}

/// The RFC 6455 checks of what a client sends that libwebsockets 4.1.6 leaves to the server,
/// for one connection. Pure: the server closes the connection with the violation returned.
///
/// lws 4.1.6 itself fails the connection with 1002 for reserved bits, unknown opcodes,
/// fragmented control frames, a continuation without a start and a new data message inside a
/// fragmented one, and rewrites most close codes a client may not send to 1002 before the
/// server sees them. Its own UTF-8 check (LWS_SERVER_OPTION_VALIDATE_UTF8) is not used: failing
/// part-way through a frame, it sometimes closes the TCP connection without the close frame (a
/// text frame of 4,000 bytes of 0xFF got no 1007, 1,000 and 70,000 bytes did), and it checks
/// nothing the server could not check the same way here.
struct InboundCheck {
    private var utf8 = UTF8Validator()

    /// Checks the next piece of a text message as it arrives: `first` when it starts a message,
    /// `last` when it ends one. A character split between pieces (or fragments) is fine; one left
    /// unfinished at the end of the message is not.
    mutating func text(_ bytes: UnsafeRawBufferPointer, first: Bool, last: Bool) -> ProtocolViolation? {
        if first { utf8.reset() }
        guard utf8.consume(bytes), !last || utf8.isAtBoundary else { return .invalidUTF8 }
        return nil
    }

    /// Checks the payload of a close frame from the client (§5.5.1): empty, or a status code a
    /// client may send followed by a UTF-8 reason.
    static func closePayload(_ payload: UnsafeRawBufferPointer) -> ProtocolViolation? {
        guard !payload.isEmpty else { return nil }
        guard payload.count >= 2 else {
            return ProtocolViolation(code: CloseCode.protocolError, reason: "close frame with a 1-byte payload")
        }
        let code = UInt16(payload[0]) << 8 | UInt16(payload[1])
        guard clientMaySend(code) else {
            return ProtocolViolation(code: CloseCode.protocolError, reason: "close code \(code) may not be sent by a client")
        }
        guard UTF8Validator.isValid(UnsafeRawBufferPointer(rebasing: payload[2...])) else {
            return ProtocolViolation(code: CloseCode.invalidPayload, reason: "close reason is not valid UTF-8")
        }
        return nil
    }

    /// Close codes a client may send: the defined ones that describe an endpoint's own condition
    /// (1000–1003, 1007–1011) and the registered and private ranges (3000–4999). 1004–1006 and
    /// 1015 are reserved, 1012–1014 describe server conditions (lws 4.1.6 rewrites them to 1002
    /// before the server sees them), 0–999, 1016–2999 and 5000 and above are unassigned.
    static func clientMaySend(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1011, 3000...4999: true
        default: false
        }
    }
}
