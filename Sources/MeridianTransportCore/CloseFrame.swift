/// Parses a close frame payload: a big-endian code and a UTF-8 reason.
package func parseClosePayload(_ input: UnsafeMutableRawPointer?, _ length: Int) -> (code: UInt16?, reason: String) {
    guard let input, length >= 2 else { return (nil, "") }
    let bytes = UnsafeRawBufferPointer(start: input, count: length)
    let code = UInt16(bytes[0]) << 8 | UInt16(bytes[1])
    return (code, String(decoding: bytes[2...], as: UTF8.self))
}

/// `reason` cut to at most 123 UTF-8 bytes on a character boundary (the close frame limit).
package func closeReasonBytes(_ reason: String) -> [UInt8] {
    var bytes: [UInt8] = []
    for scalar in reason.unicodeScalars {
        let encoded = Array(String(scalar).utf8)
        if bytes.count + encoded.count > 123 { break }
        bytes.append(contentsOf: encoded)
    }
    return bytes
}
