import MeridianCore

/// How a ``MeridianClient`` joins and how it behaves when the connection drops.
public struct ClientConfiguration: Sendable {
    /// The id of the session to join (SPEC §3: 1–128 bytes of `A–Z a–z 0–9 . _ -`).
    public var session: String
    /// The display name sent with every join (1–64 characters); with a token, the token's `name` wins.
    public var name: String
    /// The role to join with. With a token it may be at most the token's role;
    /// nil takes the token's role.
    public var role: Role?
    /// Joins as a hidden participant: not listed or announced to the others, and watch only
    /// (dashboards; with a token, only `owner` and `dashboard` tokens may hide).
    public var hidden: Bool
    /// The bearer token (SPEC §5.1) sent with every join; replaced by ``MeridianClient/refreshToken(_:)``.
    public var token: String?
    /// `#rrggbb`; nil lets the server pick from its palette.
    public var color: String?
    /// How long opening the WebSocket connection may take, at the first connect and at every reconnect.
    public var connectTimeout: Duration
    /// How long a request waits for its `ack` or `error`.
    public var requestTimeout: Duration
    /// How long to wait between reconnect attempts after the connection drops, and how many to make.
    public var reconnect: ReconnectPolicy
    /// What of the session's annotations the client receives (SPEC §4.7); nil: everything.
    public var interest: Interest?
    /// How many edits ``MeridianClient/submit(_:)`` keeps while disconnected, and where.
    public var offline: OfflineQueuePolicy
    /// A new bearer token when the one the client has expired (a 4401 close, or a rejoin refused
    /// with `token_expired` or `unauthorized`); called on the client's reader thread. nil, or
    /// returning nil, leaves the client closed (``ClientUpdate/didStop(code:advice:)``).
    public var renewToken: (@Sendable () -> String?)?

    /// A configuration joining `session` as `name`; by default as an editor, visible, without a
    /// token, with 5 s timeouts, the default backoff and offline queue, and everything-interest.
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
    /// The wait before the first attempt, doubled for each later one (before jitter).
    public var initialDelay: Duration
    /// The longest wait between two attempts (before jitter).
    public var maxDelay: Duration
    /// Attempts before giving up; nil retries forever.
    public var maxAttempts: Int?

    /// A policy waiting from `initialDelay` (100 ms) up to `maxDelay` (5 s) between attempts,
    /// making at most `maxAttempts` of them (nil: no limit).
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
