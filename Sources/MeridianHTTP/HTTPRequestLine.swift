/// The first line of an HTTP/1.x request, read from raw bytes: for requests libwebsockets does
/// not parse itself (a method it does not know, such as TRACE or QUERY, and CONNECT), which
/// the transport then answers from this line alone.
public struct HTTPRequestLine: Hashable, Sendable {
    /// At most this many bytes are read looking for the end of the line.
    public static let maxLength = 8 * 1024

    /// The method, as sent: an RFC 9110 token of 1–32 characters.
    public var method: String
    /// The target up to "?", as sent (not percent-decoded).
    public var path: String
    /// The target after "?", or "".
    public var query: String

    /// A request line from its parts.
    public init(method: String, path: String, query: String) {
        self.method = method
        self.path = path
        self.query = query
    }

    /// What ``parse(_:)`` read from the bytes so far.
    public enum Parsed: Hashable, Sendable {
        /// No line end yet, and fewer than `maxLength` bytes.
        case incomplete
        /// Not a request line (or one longer than `maxLength`).
        case invalid
        /// A whole, valid request line.
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
    /// The length `text` states, or nil when it is not decimal digits alone or is above `max`.
    public static func parse(_ text: some StringProtocol, max: Int = .max) -> Int? {
        QueryString.natural(text, max: Int64(max)).map { Int($0) }
    }
}

extension HTTPRequestLine {
    /// Where the target holds a percent-encoded NUL (`%00`), which libwebsockets refuses to decode:
    /// it drops such a request without an answer, so the transport answers it from this line.
    public enum NULPlace: Hashable, Sendable {
        /// In the path.
        case path
        /// The query parameter (its name percent-decoded, `+` as a space) whose name or value holds it.
        case parameter(String)
    }

    /// The first place of the target that holds `%00`, or nil.
    public var encodedNUL: NULPlace? {
        if Self.holdsEncodedNUL(path) { return .path }
        for piece in query.split(separator: "&", omittingEmptySubsequences: true) where Self.holdsEncodedNUL(piece) {
            let name = piece.firstIndex(of: "=").map { piece[..<$0] } ?? piece
            return .parameter(Self.percentDecoded(name, plusIsSpace: true))
        }
        return nil
    }

    static func holdsEncodedNUL(_ text: some StringProtocol) -> Bool {
        text.utf8.split(separator: UInt8(ascii: "%"), omittingEmptySubsequences: false).dropFirst()
            .contains { $0.starts(with: Array("00".utf8)) }
    }

    /// `text` with `%XX` decoded (and `+` as a space where asked); invalid escapes are kept as
    /// they are, and bytes that are not UTF-8 are replaced.
    public static func percentDecoded(_ text: some StringProtocol, plusIsSpace: Bool = false) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            if bytes[i] == UInt8(ascii: "%"), i + 2 < bytes.count, let hi = hex(bytes[i + 1]), let lo = hex(bytes[i + 2]) {
                out.append(hi << 4 | lo)
                i += 3
                continue
            }
            out.append(plusIsSpace && bytes[i] == UInt8(ascii: "+") ? UInt8(ascii: " ") : bytes[i])
            i += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hex(_ b: UInt8) -> UInt8? {
        switch b {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): b - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): b - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): b - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
