#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Logging

/// The process's open-descriptor limit (RLIMIT_NOFILE): every connection holds one, and a
/// process often starts with a soft limit of 1,024 under a much higher hard limit.
///
/// The soft limit is set to what `maxConnections` needs, not to the hard limit: libwebsockets
/// sizes its descriptor table to the soft limit when the server starts, and walks the whole
/// table each time it closes a connection. With a hard limit of a million, that walk (8 MB)
/// would cost more than the rest of a close together.
enum DescriptorLimit {
    /// Descriptors kept besides WebSocket connections (listening socket, HTTP requests, storage,
    /// Redis and PostgreSQL, logs, each thread's wake-up pipe).
    static let reserve: UInt64 = 256

    /// Sets the soft limit to `maxConnections` + ``reserve`` (at most the hard limit) and logs what
    /// it got; warns when it cannot, or when the hard limit is too low for `maxConnections`.
    static func fit(to maxConnections: Int, logger: Logger) {
        var limit = rlimit()
        guard getrlimit(resourceKind, &limit) == 0 else {
            logger.warning("cannot read the open-descriptor limit (errno \(errno)); it stays as it is")
            return
        }
        let before = UInt64(limit.rlim_cur)
        let needed = UInt64(max(maxConnections, 0)) + reserve
        let target = min(UInt64(limit.rlim_max), needed)
        if before != target {
            var fitted = limit
            fitted.rlim_cur = rlim_t(target)
            if setrlimit(resourceKind, &fitted) == 0 {
                limit = fitted
            } else {
                logger.warning("cannot set the open-descriptor limit from \(before) to \(target) (errno \(errno))")
            }
        }
        let now = UInt64(limit.rlim_cur)
        logger.info("open-descriptor limit \(now) (was \(before), hard limit \(limit.rlim_max))")
        if now < needed {
            logger.warning(
                "open-descriptor limit \(now) is below --max-connections \(maxConnections) + \(reserve): connections past about \(now > reserve ? now - reserve : 0) will be refused; raise the hard limit (ulimit -Hn, LimitNOFILE=)")
        }
    }

    #if canImport(Glibc)
    private static let resourceKind = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resourceKind = RLIMIT_NOFILE
    #endif
}
