import Foundation
import MeridianSync

/// Grants of tokens verified before, so that each token's signature is checked once: an ES256
/// or RS256 signature costs tens to hundreds of microseconds on the service thread, and a
/// client presents the same token at the handshake, at `join`, on reconnects and to the HTTP
/// API. Expiry is still checked at every use (``TokenVerifier/recheck(_:at:)``). Only tokens
/// that verified are kept, at most `capacity`; when full, the oldest is replaced.
public final class TokenCache: Sendable {
    /// Checks the tokens the cache does not hold, and the expiry of those it does.
    public let verifier: TokenVerifier
    /// Most tokens kept; 0 verifies every time.
    public let capacity: Int
    private let state: Locked<State>

    private struct State {
        var grants: [String: AccessGrant] = [:]
        /// Tokens in the order they were kept; `next` is the slot replaced next.
        var order: [String] = []
        var next = 0
        var hits = 0
    }

    /// Default capacity with asymmetric keys. Tokens are at most
    /// ``TokenVerifier/maxTokenBytes`` long and usually well under 1 KiB.
    public static let defaultCapacity = 10_000

    /// A cache for `verifier`. Without `capacity`, it keeps ``defaultCapacity`` tokens when
    /// some key is ES256 or RS256, and none when every key is HS256 (an HMAC costs about as
    /// much as the lookup).
    public init(verifier: TokenVerifier, capacity: Int? = nil) {
        self.verifier = verifier
        self.capacity = max(0, capacity ?? (verifier.algorithms.allSatisfy { $0 == "HS256" } ? 0 : Self.defaultCapacity))
        state = Locked(State())
    }

    /// The grant `token` carries, or why it is refused: from the cache if the token verified
    /// before (then only its expiry is checked), else from the verifier.
    public func verify(_ token: String, at now: Date = Date()) -> Result<AccessGrant, AuthError> {
        guard capacity > 0 else { return verifier.verify(token, at: now) }
        let cached = state.withLock { state -> AccessGrant? in
            guard let grant = state.grants[token] else { return nil }
            state.hits += 1
            return grant
        }
        if let cached { return verifier.recheck(cached, at: now) }
        let result = verifier.verify(token, at: now)
        if case .success(let grant) = result {
            state.withLock { state in
                guard state.grants[token] == nil else { return }
                if state.order.count < capacity {
                    state.order.append(token)
                } else {
                    state.grants[state.order[state.next]] = nil
                    state.order[state.next] = token
                    state.next = (state.next + 1) % capacity
                }
                state.grants[token] = grant
            }
        }
        return result
    }

    /// Tokens kept now.
    public var count: Int { state.withLock { $0.grants.count } }
    /// Verifications answered from the cache so far.
    public var hits: Int { state.withLock { $0.hits } }
}
