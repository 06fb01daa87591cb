/// Matches session ids against a token's `session` claim: an exact id, or a
/// pattern where `*` stands for any run of characters (`city-*`, `*`).
public enum SessionPattern {
    /// Whether session `id` matches `pattern`: the same bytes, each `*` standing for any run of
    /// characters (the empty one too).
    public static func matches(_ pattern: String, _ id: String) -> Bool {
        matches(Array(pattern.utf8)[...], Array(id.utf8)[...])
    }

    private static func matches(_ p: ArraySlice<UInt8>, _ s: ArraySlice<UInt8>) -> Bool {
        // Iterative glob with one backtrack point: linear in practice, never exponential.
        var pi = p.startIndex, si = s.startIndex
        var star: Int?, resume = s.startIndex
        while si < s.endIndex {
            if pi < p.endIndex, p[pi] != UInt8(ascii: "*"), p[pi] == s[si] {
                pi += 1
                si += 1
            } else if pi < p.endIndex, p[pi] == UInt8(ascii: "*") {
                star = pi
                resume = si
                pi += 1
            } else if let star {
                pi = star + 1
                resume += 1
                si = resume
            } else {
                return false
            }
        }
        while pi < p.endIndex, p[pi] == UInt8(ascii: "*") { pi += 1 }
        return pi == p.endIndex
    }
}
