import MeridianAuth

/// How a server learns who a connection is.
public enum Authentication: Sendable {
    /// Development only: a join claims its own name and role. A server with
    /// it refuses to bind to anything but a loopback address.
    case none
    /// Bearer tokens (JWT), checked by the verifier at the handshake and at join.
    case tokens(TokenVerifier)

    /// Whether `host` is a loopback address (127.0.0.0/8, ::1, localhost).
    static func isLoopback(_ host: String) -> Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }
}
