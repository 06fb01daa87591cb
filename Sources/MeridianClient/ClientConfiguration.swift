import MeridianCore

/// How a ``MeridianClient`` joins and how it behaves when the connection drops.
public struct ClientConfiguration: Sendable {
    public var session: String
    public var name: String
    /// The role to join with. With a token it may be at most the token's role;
    /// nil takes the token's role.
    public var role: Role?
    public var hidden: Bool
    /// The bearer token (SPEC §5.1) sent with every join; replaced by ``MeridianClient/refreshToken(_:)``.
    public var token: String?
    /// `#rrggbb`; nil lets the server pick from its palette.
    public var color: String?
    public var connectTimeout: Duration
    /// How long a request waits for its `ack` or `error`.
    public var requestTimeout: Duration
    public var reconnect: ReconnectPolicy
    /// What of the session's annotations the client receives (SPEC §4.7); nil: everything.
    public var interest: Interest?
    /// How many edits ``MeridianClient/submit(_:)`` keeps while disconnected, and where.
    public var offline: OfflineQueuePolicy
    /// A new bearer token when the one the client has expired (a 4401 close, or a rejoin refused
    /// with `token_expired` or `unauthorized`); called on the client's reader thread. nil, or
    /// returning nil, leaves the client closed (``ClientUpdate/didStop(code:advice:)``).
    public var renewToken: (@Sendable () -> String?)?

    public init(
        session: String, name: String, role: Role? = .editor, hidden: Bool = false, color: String? = nil, token: String? = nil,
        connectTimeout: Duration = .seconds(5), requestTimeout: Duration = .seconds(5),
        reconnect: ReconnectPolicy = ReconnectPolicy(), interest: Interest? = nil, offline: OfflineQueuePolicy = OfflineQueuePolicy(),
        renewToken: (@Sendable () -> String?)? = nil
    ) {
        self.renewToken = renewToken
        self.session = session
        self.name = name
        self.role = role
        self.hidden = hidden
        self.token = token
        self.color = color
        self.connectTimeout = connectTimeout
        self.requestTimeout = requestTimeout
        self.reconnect = reconnect
        self.interest = interest
        self.offline = offline
    }
}

/// Exponential backoff with jitter: attempt n waits `initialDelay * 2^n` (at most `maxDelay`),
/// scaled by a random factor in [0.5, 1].
public struct ReconnectPolicy: Sendable {
    public var initialDelay: Duration
    public var maxDelay: Duration
    /// Attempts before giving up; nil retries forever.
    public var maxAttempts: Int?

    public init(initialDelay: Duration = .milliseconds(100), maxDelay: Duration = .seconds(5), maxAttempts: Int? = nil) {
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.maxAttempts = maxAttempts
    }

    /// The wait before attempt `attempt` (0-based).
    public func delay(attempt: Int) -> Duration {
        let base = initialDelay * (1 << min(attempt, 20))
        let capped = min(base, maxDelay)
        return capped * Double.random(in: 0.5...1)
    }
}
