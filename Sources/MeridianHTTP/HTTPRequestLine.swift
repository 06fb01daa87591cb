/// The first line of an HTTP/1.x request, read from raw bytes: for requests libwebsockets does
/// not parse itself (a method it does not know, such as TRACE or QUERY, and CONNECT), which
/// the transport then answers from this line alone.
public struct HTTPRequestLine: Hashable, Sendable {
    /// At most this many bytes are read looking for the end of the line.
    public static let maxLength = 8 * 1024

    public var method: String
    /// The target up to "?", as sent (not percent-decoded).
    public var path: String
    /// The target after "?", or "".
    public var query: String

    public init(method: String, path: String, query: String) {
        self.method = method
        self.path = path
        self.query = query
    }

    public enum Parsed: Hashable, Sendable {
        /// No line end yet, and fewer than `maxLength` bytes.
        case incomplete
        /// Not a request line (or one longer than `maxLength`).
        case invalid
        case line(HTTPRequestLine)
    }

    /// `METHOD SP target SP HTTP/x.y CRLF` (or LF alone): the method a token of RFC 9110's
    /// characters (at most 32 of them), the target without spaces or control characters.
    public static func parse(_ bytes: some Collection<UInt8>) -> Parsed {
        // What cannot start a request line is refused before its end comes (a TLS hello on the
        // plain port, binary noise), so such a connection is not held until the timeout.
        let methodEnd = bytes.firstIndex(of: 32) ?? bytes.endIndex
        let method = bytes[..<methodEnd]
        if method.count > 32 || (methodEnd < bytes.endIndex && method.isEmpty) || !method.allSatisfy(isTokenByte) {
            return .invalid
        }
        guard let end = bytes.firstIndex(of: 10) else { return bytes.count < maxLength ? .incomplete : .invalid }
        guard bytes.distance(from: bytes.startIndex, to: end) <= maxLength else { return .invalid }
        var line = Array(bytes[..<end])
        if line.last == 13 { line.removeLast() }
        let parts = line.split(separator: 32, omittingEmptySubsequences: false)
        guard parts.count == 3, (1...32).contains(parts[0].count), parts[0].allSatisfy(isTokenByte),
              !parts[1].isEmpty, parts[1].allSatisfy({ $0 > 32 && $0 != 127 }),
              parts[2].starts(with: Array("HTTP/".utf8)) else { return .invalid }
        let target = String(decoding: parts[1], as: UTF8.self)
        let path: Substring
        let query: Substring
        if let mark = target.firstIndex(of: "?") {
            path = target[..<mark]
            query = target[target.index(after: mark)...]
        } else {
            (path, query) = (target[...], "")
        }
        return .line(HTTPRequestLine(method: String(decoding: parts[0], as: UTF8.self), path: String(path), query: String(query)))
    }

    /// RFC 9110's `tchar`.
    static func isTokenByte(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"): true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"), UInt8(ascii: "'"),
             UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "^"), UInt8(ascii: "_"),
             UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"): true
        default: false
        }
    }
}

/// A `Content-Length` value: decimal digits only, at most `max`; nil for anything else
/// (a sign, spaces, a list, an overflow).
public enum ContentLength {
    public static func parse(_ text: some StringProtocol, max: Int = .max) -> Int? {
        QueryString.natural(text, max: Int64(max)).map { Int($0) }
    }
}
