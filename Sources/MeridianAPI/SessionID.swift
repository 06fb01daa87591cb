/// Session ids (SPEC §3): 1–128 bytes of `A–Z a–z 0–9 . _ -`, but not `.` or `..`, which a URL
/// path cannot name (RFC 3986 removes them as dot segments).
public enum SessionID {
    /// Most bytes in a session id.
    public static let maxLength = 128

    /// True if `id` is a session id: 1–128 bytes of `A–Z a–z 0–9 . _ -`, neither `.` nor `..`.
    public static func isValid(_ id: some StringProtocol) -> Bool {
        let bytes = id.utf8
        guard id != ".", id != ".." else { return false }
        return !bytes.isEmpty && bytes.count <= maxLength && bytes.allSatisfy { b in
            (b >= 48 && b <= 57) || (b >= 65 && b <= 90) || (b >= 97 && b <= 122) || b == 46 || b == 95 || b == 45
        }
    }

    /// The refusal of an id that is not one, naming `field` (`id` in a path or a create's body).
    public static func refusal(_ id: some StringProtocol, field: String = "id") -> APIRefusal {
        .invalid(field, "\(field): 1-128 characters of A-Z a-z 0-9 . _ -, not . or .., got \(quoted(id))")
    }
}
