/// One parameter of a query string: `name=value`, or `name` alone (no value).
public struct QueryParameter: Hashable, Sendable {
    /// The text before the first "=" (may be empty).
    public var name: Substring
    /// The text after the first "="; nil when the parameter has no "=".
    public var value: Substring?

    /// A parameter `name`, with `value` (nil: no "=").
    public init(name: Substring, value: Substring?) {
        self.name = name
        self.value = value
    }
}

/// Query strings as the transport hands them over (without the "?").
public enum QueryString {
    /// Every parameter of `query`, in order: split at "&" and "," (lws splits the arguments at
    /// "&", percent-decodes them, "+" as a space, and hands them over joined by either), each at
    /// its first "="; empty pieces ("a&&b") are skipped. Names may be empty ("=1") and may
    /// repeat: what that means is the caller's to judge.
    public static func parameters(_ query: some StringProtocol) -> [QueryParameter] {
        query.split(whereSeparator: { $0 == "&" || $0 == "," }).map { piece in
            guard let equals = piece.firstIndex(of: "=") else { return QueryParameter(name: Substring(piece), value: nil) }
            return QueryParameter(name: Substring(piece[..<equals]), value: Substring(piece[piece.index(after: equals)...]))
        }
    }

    /// A non-negative decimal integer of ASCII digits only (no sign, no space, no exponent);
    /// nil when it is anything else or above `max`.
    public static func natural(_ text: some StringProtocol, max: Int64 = .max) -> Int64? {
        guard !text.utf8.isEmpty else { return nil }
        var n: Int64 = 0
        for b in text.utf8 {
            guard b >= 48, b <= 57 else { return nil }
            let (times10, o1) = n.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(Int64(b - 48))
            guard !o1, !o2, sum <= max else { return nil }
            n = sum
        }
        return n
    }
}
