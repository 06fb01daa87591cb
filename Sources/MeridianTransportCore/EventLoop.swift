/// The event loop libwebsockets runs on.
public enum EventLoop: String, Sendable, CaseIterable {
    /// libwebsockets' default loop: `poll()` over every descriptor on each pass.
    case poll
    /// libev on epoll (`LWS_SERVER_OPTION_LIBEV`): a pass costs what is ready, not what is open.
    case libev
}
