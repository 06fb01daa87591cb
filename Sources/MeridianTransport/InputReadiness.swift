import Glibc
internal import CLibWebSockets

/// Whether any WebSocket connection of the loop has input waiting, asked without a pass of the
/// event loop: an epoll set of their sockets (level-triggered, input only), asked with one
/// `epoll_wait` that does not sleep. A long run of end-of-pass writes asks it to learn whether to
/// make way for a pass that reads (``TransportConfiguration/writeSlice``).
struct InputReadiness: ~Copyable {
    private let set: Int32

    init() {
        set = mrd_readiness_new()
    }

    deinit {
        if set >= 0 { Glibc.close(set) }
    }

    /// Watches `socket` until it is removed, or closed (the kernel drops it from the set then).
    func watch(_ socket: Int32) {
        guard set >= 0, socket >= 0 else { return }
        _ = mrd_readiness_watch(set, socket)
    }

    func forget(_ socket: Int32) {
        guard set >= 0, socket >= 0 else { return }
        mrd_readiness_forget(set, socket)
    }

    /// True when a watched socket has input (or hung up), or when the set cannot tell: the caller
    /// then makes way for a pass, as it would without it.
    var inputWaits: Bool {
        guard set >= 0 else { return true }
        return mrd_readiness_any(set) != 0
    }
}
